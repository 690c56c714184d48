import { describe, expect, it } from 'vitest';
import { CallhookError } from '../errors.js';
import { type InCallHandler, type InCallRequest, runHandler } from './handler.js';
import { callerHistory } from './history.js';

const request: InCallRequest = {
  hook: 'lookup',
  data: { phone_number: '+919812345678' },
  extra: {},
  problems: [],
  history: callerHistory('+919812345678', 0, []),
};

const failure = (handler: InCallHandler, timeoutMs = 1000) =>
  runHandler(handler, request, timeoutMs).then(
    () => undefined,
    (err: unknown) => err,
  );

describe('runHandler', () => {
  it("serialises the handler's result, sync or async, and answers {} for nothing", async () => {
    expect(await runHandler(({ history }) => ({ count: history.count }), request, 1000)).toBe('{"count":0}');
    expect(await runHandler(async ({ data }) => data.phone_number, request, 1000)).toBe('"+919812345678"');
    expect(await runHandler(() => undefined, request, 1000)).toBe('{}');
  });

  it('turns a throw, sync or async, or a result JSON cannot hold into IN_CALL_FAILED, keeping the cause', async () => {
    const boom = new Error('boom');
    for (const handler of [
      () => {
        throw boom;
      },
      async () => Promise.reject(boom),
    ] as InCallHandler[]) {
      const err = await failure(handler);
      expect(err).toBeInstanceOf(CallhookError);
      expect(err).toMatchObject({ code: 'IN_CALL_FAILED', status: 502, cause: boom });
    }
    expect(await failure(() => ({ big: 1n }))).toMatchObject({ code: 'IN_CALL_FAILED', cause: expect.any(TypeError) });
  });

  it('answers IN_CALL_TIMEOUT at the time-out and aborts the signal', async () => {
    let signal: AbortSignal | undefined;
    const started = Date.now();
    const err = await failure((_request, context) => {
      signal = context.signal;
      return new Promise(() => {});
    }, 50);
    expect(err).toMatchObject({ code: 'IN_CALL_TIMEOUT', status: 504 });
    expect(Date.now() - started).toBeLessThan(500);
    expect(signal?.aborted).toBe(true);
  });
});
