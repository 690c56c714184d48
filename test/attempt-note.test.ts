import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storesUnderTest } from './helpers/database.js';
import { ADMIN, post, sampleCall, startServer, type TestServer, tempDir, until } from './helpers/server.js';
import { serviceUrl } from './helpers/services.js';

/**
 * A successful attempt may say what it did (docs/reference.md#crm-sinks: a CRM search that found several contacts says
 * so in the attempt): a sink resolves `deliver` with `{ note }`, and the note is kept with the attempt, masked like an
 * error, and shown by `GET /admin/calls/<id>`. On both stores (migration 7).
 */

const stores = storesUnderTest(serviceUrl('postgres'), 'callhook_note');
const SECRET = 'note-secret-token-4f2a9c';

describe.each(stores)('an attempt note on %s', (_, open) => {
  let server: TestServer;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const opened = await open();
    drop = opened.drop;
    const folder = tempDir('callhook-note-sink-');
    writeFileSync(
      join(folder, 'noting.mjs'),
      'export default ({ token }) => ({ async deliver(record) { return { note: `2 contacts matched ${record.data.phone_number}; used the most recently updated (token ${token})` }; } });',
    );
    server = await startServer({
      env: { ...opened.env, NOTE_TOKEN: SECRET },
      config: { sinks: [{ name: 'crm', type: 'module', module: join(folder, 'noting.mjs'), token: '${NOTE_TOKEN}' }] },
    });
  });
  afterAll(async () => {
    await server?.close();
    await drop?.();
  });

  it('keeps what a successful attempt said, masked, and shows it with the call', async () => {
    const { id } = await (await post(server.url, sampleCall({ phone_number: '+919812345678' }))).json();
    const detail = await until(async () => {
      const body = await (
        await fetch(`${server.url}/admin/calls/${id}`, { headers: { authorization: `Bearer ${ADMIN}` } })
      ).json();
      return body.attempts?.length === 1 ? body : undefined;
    });
    expect(detail.attempts[0]).toMatchObject({
      outcome: 'ok',
      error: null,
      note: '2 contacts matched +919812345678; used the most recently updated (token ***)',
    });
  });
});
