import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, post, sampleCall, startServer, type TestServer } from './helpers/server.js';

/**
 * `date_order` (docs/reference.md#normalising) reaches every place that normalises a call. serve normalises an
 * end-of-call request on SQLite's writer thread (src/intake/thread.ts), which builds its own hooks from settings passed
 * to it, so a setting that did not cross to the thread would leave it reading the day first.
 */

interface Reply {
  status: string;
  id: string;
  problems: { field: string; code: string; value?: unknown }[];
}

const stored = async (server: TestServer, id: string) => {
  const res = await fetch(`${server.url}/admin/calls/${encodeURIComponent(id)}`, {
    headers: { authorization: `Bearer ${ADMIN}` },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { record: { data: Record<string, unknown> } }).record.data;
};

describe.each([
  ['MDY', { date_order: 'MDY' }, '2026-05-03'],
  ['DMY (the default)', undefined, '2026-03-05'],
] as const)('serve with date_order %s', (_, config, fiveThree) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer(config === undefined ? {} : { config });
  });
  afterAll(() => server?.close());

  it('reads the numeric date in that order, on the path that stores the call', async () => {
    const reply = (await (await post(server.url, sampleCall({ call_date: '05/03/2026' }))).json()) as Reply;
    expect(reply).toMatchObject({ status: 'accepted', problems: [] });
    expect((await stored(server, reply.id)).call_date).toBe(fiveThree);
  });

  it('refuses a day that cannot be a month in that order, keeping the value in the problem', async () => {
    const impossible = config === undefined ? '11/21/2026' : '21/11/2026';
    const reply = (await (await post(server.url, sampleCall({ call_date: impossible }))).json()) as Reply;
    expect(reply.problems).toMatchObject([{ field: 'call_date', code: 'invalid_format', value: impossible }]);
    expect(await stored(server, reply.id)).not.toHaveProperty('call_date');
  });
});
