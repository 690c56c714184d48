import { describe, expect, it } from 'vitest';
import { classify, errorForStatus, PermanentError, RetryableError } from './errors.js';

describe('classify (docs/reference.md#sinks-and-delivery and docs/reference.md#queues-and-databases)', () => {
  it('reads our errors, and plain ones by their fields, as a sink written by a user throws them', () => {
    expect(classify(new PermanentError('no', { status: 400 }))).toEqual({
      kind: 'permanent',
      error: 'no',
      status: 400,
    });
    expect(classify(new RetryableError('later', { status: 503, retryAfterMs: 5_000 }))).toEqual({
      kind: 'retry',
      error: 'later',
      status: 503,
      retryAfterMs: 5_000,
    });
    expect(classify(Object.assign(new Error('bad field'), { status: 422 }))).toMatchObject({
      kind: 'permanent',
      status: 422,
    });
    expect(classify(Object.assign(new Error('bad field'), { status: 422, permanent: false }))).toMatchObject({
      kind: 'retry',
    });
    expect(classify(Object.assign(new Error('gone'), { permanent: true }))).toMatchObject({ kind: 'permanent' });
    expect(classify(new Error('ECONNREFUSED'))).toEqual({
      kind: 'retry',
      error: 'ECONNREFUSED',
      status: undefined,
      retryAfterMs: undefined,
    });
    expect(classify('a string')).toMatchObject({ kind: 'retry', error: 'a string' });
  });

  it('tells a 429, or a service saying so in its own words, as rate-limited with its wait', () => {
    expect(classify(new RetryableError('HTTP 429', { status: 429, retryAfterMs: 10_000 }))).toEqual({
      kind: 'rate-limited',
      error: 'HTTP 429',
      status: 429,
      retryAfterMs: 10_000,
    });
    expect(classify(Object.assign(new Error('TOO_MANY_REQUESTS'), { rateLimited: true }))).toMatchObject({
      kind: 'rate-limited',
      retryAfterMs: undefined,
    });
    // A permanent error wins over a rate limit: nothing waiting would help it.
    expect(classify(Object.assign(new Error('quota closed'), { rateLimited: true, permanent: true }))).toMatchObject({
      kind: 'permanent',
    });
  });

  it('maps a status to the error a sink throws: redirects and most 4xx are permanent', () => {
    for (const status of [301, 400, 401, 403, 404, 422])
      expect(errorForStatus(status, 'x')).toBeInstanceOf(PermanentError);
    for (const status of [408, 425, 429, 500, 502, 503, undefined])
      expect(errorForStatus(status, 'x')).toBeInstanceOf(RetryableError);
    expect(errorForStatus(429, 'x', { retryAfterMs: 3_000 })).toMatchObject({ status: 429, retryAfterMs: 3_000 });
  });
});
