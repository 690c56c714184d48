import { randomFillSync } from 'node:crypto';
import { getEnvironmentData, setEnvironmentData } from 'node:worker_threads';
import { v7 } from 'uuid';

/** Random bytes are drawn a pool at a time: one call into the CSPRNG per 256 ids, not one per id (a profile cost). */
const pool = Buffer.alloc(16 * 256);
let offset = pool.length;

function random(): Buffer {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  return pool.subarray(offset, (offset += 16));
}

/**
 * The last id's millisecond and counter, one for the whole process: webhook calls get their ids on the SQLite
 * writer thread, reconciled and ingested ones (and every call on PostgreSQL) on the main thread, and the issue's
 * order holds across both only if they count on from one state. Module state is per thread, so the state is a
 * SharedArrayBuffer, made by the first thread that loads this module (the main thread: store/thread.ts loads it
 * before it starts a thread) and handed to every worker started afterwards as environment data, which Node gives
 * each new worker at its start (and which a worker passes on to its own), sharing the memory of a SharedArrayBuffer
 * rather than copying it. Unlike workerData it needs nothing from whoever starts the worker.
 *
 * One 64-bit word, so one compare-and-swap moves it: the millisecond in the top 48 bits (a UUIDv7's whole time
 * field), the counter in the low 16.
 */
const SHARED_KEY = 'callhook:ids';
const shared = (getEnvironmentData(SHARED_KEY) as SharedArrayBuffer | undefined) ?? shareNew();
const last = new BigUint64Array(shared);

function shareNew(): SharedArrayBuffer {
  const buffer = new SharedArrayBuffer(BigUint64Array.BYTES_PER_ELEMENT);
  setEnvironmentData(SHARED_KEY, buffer);
  return buffer;
}

const COUNTER_MAX = 0xffff;

/**
 * A UUIDv7 (RFC 9562 section 5.7) made by uuid's v7: time-ordered, so record ids serve as the admin API's `after`
 * cursor. Ids made one after another in the process, on any of its threads, sort in the order they were made, also
 * within one millisecond and also when `now` goes backwards (RFC 9562 section 6.2, method 1): a 16-bit counter
 * follows the millisecond, started at random with its top bit clear each new millisecond (so at least 32,768 ids
 * fit in one), and counting on while the time given is not later than the last id's, which stays the id's time;
 * should the counter run out, the time moves on a millisecond. Two threads that read the same last state race on
 * the compare-and-swap, and the loser counts on from the winner's.
 *
 * uuid's v7 keeps such a counter itself only when it reads the clock (no options), and only per thread. Here the time
 * is the caller's (a call's receive time, intake/pipeline.ts), so the counter is kept here and given to v7 as the top
 * half of its 32-bit `seq`, random bits below it, with the random tail from the pool: v7 drawing 16 bytes from the
 * CSPRNG for every id was several times slower (figures in the commit).
 */
export function newId(now = Date.now()): string {
  const bytes = random();
  const time = Math.floor(now);
  let ms: number;
  let counter: number;
  let seen = Atomics.load(last, 0);
  for (;;) {
    const lastMs = Number(seen >> 16n);
    let next: bigint;
    if (time > lastMs) {
      ms = time;
      counter = bytes.readUInt16BE(6) & 0x7fff;
      next = (BigInt(ms) << 16n) | BigInt(counter);
    } else {
      counter = Number(seen & 0xffffn);
      // On overflow the low 16 bits roll to 0 and carry into the millisecond: the time moves on one.
      ms = counter === COUNTER_MAX ? lastMs + 1 : lastMs;
      counter = (counter + 1) & COUNTER_MAX;
      next = seen + 1n;
    }
    const found = Atomics.compareExchange(last, 0, seen, next);
    if (found === seen) break;
    seen = found;
  }
  return v7({ msecs: ms, seq: ((counter << 16) | bytes.readUInt16BE(8)) >>> 0, random: bytes });
}
