import { setTimeout as sleep } from 'node:timers/promises';
import type Database from 'better-sqlite3';

/**
 * Rows changed per transaction by a bulk write on the store's connection (purge, retry). SQLite has one writer:
 * one statement over months of calls held the lock for seconds (a purge of 200,000 calls: 2.7 s; a retry of
 * 100,000 dead deliveries: 240 ms, with the event loop blocked all along), longer than the writer thread waits for
 * it, and calls arriving meanwhile were refused. A chunk holds it for about a millisecond.
 */
export const CHUNK = 500;

/**
 * Runs `chunk` in a transaction of its own until it changes fewer than `size` rows, leaving the lock free between
 * two chunks for as long as the last one held it, so the writer thread's commits get their turn. `chunk` gets the
 * most rows it may change; `onChunk` is told how many it did. Returns the rows changed in all.
 */
export async function inChunks(
  db: Database.Database,
  chunk: (limit: number) => number,
  onChunk?: (changed: number) => void,
  size = CHUNK,
): Promise<number> {
  let total = 0;
  for (;;) {
    const started = performance.now();
    const changed = db.transaction(() => chunk(size)).immediate();
    total += changed;
    onChunk?.(changed);
    if (changed < size) return total;
    await sleep(Math.max(1, performance.now() - started));
  }
}
