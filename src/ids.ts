import { randomFillSync } from 'node:crypto';
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

/** The last id's millisecond and counter: this thread's, as module state is (a worker thread has its own). */
let lastMs = -Infinity;
let counter = 0;

/**
 * A UUIDv7 (RFC 9562 section 5.7) made by uuid's v7: time-ordered, so record ids serve as the admin API's `after`
 * cursor. Ids made one after another in a thread sort in the order they were made, also within one millisecond and
 * also when `now` goes backwards (RFC 9562 section 6.2, method 1): a 32-bit counter follows the millisecond, started
 * at random with its top bit clear each new millisecond, and counting on while the time given is not later than the
 * last id's, which stays the id's time; should the counter run out, the time moves on a millisecond.
 *
 * uuid's v7 keeps such a counter itself only when it reads the clock (no options). Here the time is the caller's
 * (a call's receive time, intake.ts), so the counter is kept here and given to v7 as `seq`, with the random tail
 * from the pool: v7 drawing 16 bytes from the CSPRNG for every id was several times slower (figures in the commit).
 */
export function newId(now = Date.now()): string {
  const bytes = random();
  if (now > lastMs) {
    lastMs = now;
    counter = bytes.readUInt32BE(6) >>> 1;
  } else if (counter === 0xffffffff) {
    lastMs++;
    counter = 0;
  } else {
    counter++;
  }
  return v7({ msecs: lastMs, seq: counter, random: bytes });
}
