import { describe, expect, it } from 'vitest';
import { newId } from './ids.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** The 48-bit millisecond at the front of a UUIDv7 (RFC 9562 section 5.7). */
const msOf = (id: string) => parseInt(id.replaceAll('-', '').slice(0, 12), 16);
/** The first id that does not sort after the one made before it; -1 when each does. */
const outOfOrder = (ids: string[]) => ids.findIndex((id, i) => i > 0 && !(ids[i - 1]! < id));

// Times ahead of the clock, each later than the last test's: module state (the last id) carries from test to test.
describe('newId', () => {
  it('gives ids that sort in the order they were made within one tight loop, most inside one millisecond', () => {
    const ids = Array.from({ length: 10_000 }, () => newId());
    for (const id of ids.slice(0, 10)) expect(id).toMatch(UUID_V7);
    expect(outOfOrder(ids)).toBe(-1);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('gives UUIDv7s that sort by time and never repeat', () => {
    const ids = Array.from({ length: 2000 }, (_, i) => newId(3_000_000_000_000 + i));
    for (const id of ids) expect(id).toMatch(UUID_V7);
    expect(outOfOrder(ids)).toBe(-1);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.map(msOf)).toEqual(ids.map((_, i) => 3_000_000_000_000 + i));
  });

  it('gives ids in the order they were made when each is given the same time, which they keep', () => {
    const at = 3_100_000_000_000;
    const ids = Array.from({ length: 10_000 }, () => newId(at));
    expect(outOfOrder(ids)).toBe(-1);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids.map(msOf))).toEqual(new Set([at]));
  });

  it('keeps the order when the time given goes back (an earlier receive time made later)', () => {
    const later = newId(3_200_000_000_005);
    const earlier = newId(3_200_000_000_000);
    expect(earlier > later).toBe(true);
    expect(msOf(earlier)).toBe(3_200_000_000_005);
    expect(newId(3_200_000_000_006) > earlier).toBe(true);
  });
});
