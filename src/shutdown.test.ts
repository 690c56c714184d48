import { describe, expect, it } from 'vitest';
import { within } from './shutdown.js';

describe('within', () => {
  it('passes on what settles in time, and rejects naming what did not', async () => {
    await expect(within(Promise.resolve(7), 50, 'fast')).resolves.toBe(7);
    await expect(within(new Promise(() => {}), 20, 'the drain')).rejects.toThrow(
      'the drain still running after 0.02 s',
    );
  });
});
