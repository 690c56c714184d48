import { describe, expect, it } from 'vitest';
import { newId } from './ids.js';

describe('newId', () => {
  it('gives UUIDv7s that sort by time and never repeat', () => {
    const ids = Array.from({ length: 2000 }, (_, i) => newId(1_700_000_000_000 + i));
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(newId(1_700_000_000_000).slice(0, 13)).toBe(newId(1_700_000_000_000).slice(0, 13));
  });
});
