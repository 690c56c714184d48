import { describe, expect, it } from 'vitest';
import { secretMasker } from '../secrets.js';
import { attemptError, ERROR_CHARS } from './attempt-error.js';

describe("an attempt's stored error", () => {
  it('is masked before it is cut, so a secret across the cut leaves no part of itself', () => {
    const secret = 'TruncSecret01-abcdefgh';
    const text = `HTTP 500: ${'x'.repeat(ERROR_CHARS - 20)} ${secret} and more`;
    const stored = attemptError(text, secretMasker([secret]));
    expect(stored.length).toBeLessThanOrEqual(ERROR_CHARS);
    expect(stored).toMatch(/ \*\*\* and more$|…$/);
    expect(stored).not.toContain('TruncSec');
  });

  it('keeps a short error whole, and cuts a long one with an ellipsis', () => {
    expect(attemptError('HTTP 503: busy')).toBe('HTTP 503: busy');
    const long = attemptError('y'.repeat(2 * ERROR_CHARS));
    expect(long).toHaveLength(ERROR_CHARS);
    expect(long.endsWith('…')).toBe(true);
  });
});
