import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, KEY, post, sampleCall, startServer, type TestServer, until } from './helpers/server.js';

/**
 * docs/reference.md#refused-requests: an admin request body over 64 KiB is refused with 413 before it is parsed,
 * declared or chunked, whatever the route; the ingest of a refused request may carry up to `body_limit`.
 */
describe('admin request bodies', () => {
  const bodyLimit = 128 * 1024;
  let server: TestServer;
  let callId: string;
  beforeAll(async () => {
    server = await startServer({ config: { body_limit: bodyLimit } });
    callId = ((await (await post(server.url, sampleCall())).json()) as { id: string }).id;
  });
  afterAll(() => server?.close());

  const admin = (path: string, init: RequestInit = {}) =>
    fetch(`${server.url}/admin${path}`, {
      ...init,
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json', ...init.headers },
    });
  const deliveries = async () =>
    ((await (await admin(`/deliveries?call=${callId}`)).json()) as { deliveries: { state: string }[] }).deliveries;
  /** Valid JSON that would be acted on if it were read: a redelivery to every sink, padded with spaces. */
  const padded = (size: number) => `{}${' '.repeat(size - 2)}`;
  const chunked = (text: string) =>
    new ReadableStream({
      start(controller) {
        const bytes = new TextEncoder().encode(text);
        for (let at = 0; at < bytes.length; at += 16 * 1024) controller.enqueue(bytes.subarray(at, at + 16 * 1024));
        controller.close();
      },
    });
  const expect413 = async (res: Response) => {
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ error: 413, message: expect.stringContaining(String(64 * 1024)) });
  };

  it('refuses a 200 KiB body with 413 and changes nothing, declared or chunked', async () => {
    await until(async () => (await deliveries()).every((d) => d.state === 'done'));
    const before = await deliveries();
    expect(before.length).toBeGreaterThan(0);
    await expect413(await admin(`/calls/${callId}/redeliver`, { method: 'POST', body: padded(200 * 1024) }));
    await expect413(
      await admin(`/calls/${callId}/redeliver`, {
        method: 'POST',
        body: chunked(padded(200 * 1024)),
        duplex: 'half',
      } as RequestInit),
    );
    // A route that never reads a body refuses one too, before it acts.
    await expect413(await admin(`/calls/${callId}/release`, { method: 'POST', body: padded(200 * 1024) }));
    expect(await deliveries()).toEqual(before);

    // Just under the limit it is read and acted on.
    const small = await admin(`/calls/${callId}/redeliver`, {
      method: 'POST',
      body: chunked(padded(60 * 1024)),
      duplex: 'half',
    } as RequestInit);
    expect(small.status).toBe(200);
    expect(await small.json()).toMatchObject({ scheduled: before.length });
  });

  it('lets the ingest of a refused request carry up to body_limit, and no more', async () => {
    const refuse = async () => {
      const res = await fetch(`${server.url}/webhooks/end-of-call`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: '{"call_id": ',
      });
      expect(res.status).toBe(400);
      const listed = (await (await admin('/receipts?outcome=rejected&order=desc&limit=1')).json()) as {
        receipts: { id: number }[];
      };
      return listed.receipts[0]!.id;
    };
    const corrected = (size: number) => {
      const call = JSON.stringify(sampleCall({ call_summary: '' }));
      return `${call.slice(0, -1)}, "notes": "${'x'.repeat(size - call.length - 13)}"}`;
    };
    expect(Buffer.byteLength(corrected(100 * 1024))).toBe(100 * 1024);

    const over = await admin(`/receipts/${await refuse()}/ingest`, {
      method: 'POST',
      body: JSON.stringify({ body: corrected(bodyLimit + 1) }),
    });
    expect(over.status).toBe(413);
    expect(await over.json()).toEqual({ error: 413, message: expect.stringContaining(String(bodyLimit)) });

    const within = await admin(`/receipts/${await refuse()}/ingest`, {
      method: 'POST',
      body: JSON.stringify({ body: corrected(100 * 1024) }),
    });
    expect(within.status).toBe(200);
    expect(await within.json()).toMatchObject({ status: 'accepted' });
    // As base64, as the CLI sends a body JSON would swell, a body of body_limit bytes fits too.
    const base64 = Buffer.from(corrected(bodyLimit)).toString('base64');
    const full = await admin(`/receipts/${await refuse()}/ingest`, {
      method: 'POST',
      body: chunked(JSON.stringify({ body_base64: base64 })),
      duplex: 'half',
    } as RequestInit);
    expect(full.status).toBe(200);
  });
});
