import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { CallRecord } from '../../src/record.js';
import { compileRoutes } from '../../src/routing/routes.js';
import { openSinks, resolveSinks } from '../../src/sinks/registry.js';
import { tempDir } from '../../test/helpers/server.js';

const log = pino({ level: 'silent' });
const record = (id: string, data: CallRecord['data']): CallRecord => ({
  id,
  hook: 'end-of-call',
  dedup_key: `call_id:${id}`,
  received_at: '2026-11-21T10:00:00.000Z',
  source: 'webhook',
  revision: 1,
  data,
  extra: {},
  problems: [],
});
const context = (id: string) => ({
  attempt: 1,
  idempotencyKey: `${id}:callbacks`,
  signal: new AbortController().signal,
  log,
});

describe('the callback-list example sink, loaded as a user module', () => {
  it('is checked, filtered and delivered like a built-in sink, once per record', async () => {
    const dir = tempDir();
    const path = join(dir, 'callbacks.csv');
    const [spec] = await resolveSinks(
      [
        {
          name: 'callbacks',
          type: 'module',
          module: './callback-list.js',
          path,
          when: { field: 'call_outcome', matches: 'call ?back' },
          retry: { attempts: 3 },
        },
      ],
      import.meta.dirname,
    );
    expect(spec!.policy.retry.schedule).toHaveLength(2);
    const wanted = record('r1', {
      first_name: 'Asha',
      last_name: 'Verma',
      phone_number: '+919812345678',
      call_outcome: 'Callback requested',
      call_summary: 'Call after 6, "urgent"',
    });
    const other = record('r2', { first_name: 'Ravi', phone_number: '+919812300000', call_outcome: 'order placed' });
    const [route] = compileRoutes(['callbacks'], [spec!]);
    expect(route!.accepts(wanted)).toBe(true);
    expect(route!.accepts(other)).toBe(false);

    const sink = (await openSinks([spec!], { dataDir: dir, log })).get('callbacks')!;
    await sink.deliver(wanted, context('r1'));
    await sink.deliver(wanted, context('r1'));
    const reopened = (await openSinks([spec!], { dataDir: dir, log })).get('callbacks')!;
    await reopened.deliver(wanted, context('r1'));
    expect(readFileSync(path, 'utf8')).toBe(
      'first_name,last_name,phone,description,callhook_key\nAsha,Verma,+919812345678,"Call after 6, ""urgent""",r1:callbacks\n',
    );
  });

  it('fails a record it can never deliver as permanent', async () => {
    const [spec] = await resolveSinks(
      [{ name: 'callbacks', type: 'module', module: './callback-list.js', path: join(tempDir(), 'c.csv') }],
      import.meta.dirname,
    );
    const sink = (await openSinks([spec!], { dataDir: tempDir(), log })).get('callbacks')!;
    await expect(sink.deliver(record('r3', { first_name: 'No phone' }), context('r3'))).rejects.toMatchObject({
      permanent: true,
    });
  });

  it('refuses bad options and bad modules at start-up, naming them', async () => {
    await expect(
      resolveSinks([{ name: 'callbacks', type: 'module', module: './callback-list.js' }], import.meta.dirname),
    ).rejects.toThrow(/sinks\[0\] \(callbacks\)\.path/);
    await expect(
      resolveSinks([{ name: 'callbacks', type: 'module', module: './nope.js' }], import.meta.dirname),
    ).rejects.toThrow(/sinks\[0\] \(callbacks\)\.module: cannot load/);
    await expect(resolveSinks([{ name: 'callbacks', type: 'module' }], import.meta.dirname)).rejects.toThrow(
      /\.module: the path of the sink's module is required/,
    );
    const dir = tempDir();
    writeFileSync(join(dir, 'named-only.js'), 'export const deliver = async () => {};\n');
    await expect(resolveSinks([{ name: 'x', type: 'module', module: './named-only.js' }], dir)).rejects.toThrow(
      /no default export that is a factory/,
    );
  });
});
