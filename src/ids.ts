import { randomFillSync } from 'node:crypto';

/** Random bytes are drawn a pool at a time: one call into the CSPRNG per 256 ids, not one per id (a profile cost). */
const pool = Buffer.alloc(16 * 256);
let offset = pool.length;

/**
 * A UUIDv7 (RFC 9562 section 5.7): time-ordered, so record ids sort by arrival and serve as cursors.
 * Node 20 has only crypto.randomUUID (v4); this is the 48-bit millisecond prefix and random tail.
 */
export function newId(now = Date.now()): string {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const bytes = Buffer.from(pool.subarray(offset, (offset += 16)));
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = 0x70 | (bytes[6]! & 0x0f);
  bytes[8] = 0x80 | (bytes[8]! & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
