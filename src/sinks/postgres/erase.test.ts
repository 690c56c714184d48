import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../../../test/helpers/database.js';
import { closedPort } from '../../../test/helpers/server.js';
import { serviceUrl } from '../../../test/helpers/services.js';
import type { CallRecord } from '../../record.js';
import { PermanentError, RetryableError } from '../errors.js';
import type { Sink } from '../sink.js';
import { postgresSink } from './postgres.js';

/**
 * A person's erasure in the `postgres` sink (docs/reference.md#erasure): the rows of their records deleted by the
 * column that holds the record id, in callhook's own table and in a user's table with `columns`.
 */

const log = pino({ level: 'silent' });
const url = serviceUrl('postgres');
const id = (n: number) => `019a0000-0000-7000-8000-${String(n).padStart(12, '0')}`;
const record = (n: number, over: Partial<CallRecord> = {}): CallRecord => ({
  id: id(n),
  hook: 'end-of-call',
  dedup_key: `call_id:c${n}`,
  received_at: '2026-11-21T10:00:00.000Z',
  source: 'webhook',
  revision: 1,
  data: { first_name: 'Asha', phone_number: '+919812345678' },
  extra: {},
  problems: [],
  ...over,
});
const context = (r: CallRecord) => ({
  attempt: 1,
  idempotencyKey: `${r.id}:pg`,
  signal: new AbortController().signal,
  log,
});
const eraseContext = () => ({ signal: new AbortController().signal, log });
const deliverAll = async (sink: Sink, records: CallRecord[]) => {
  for (const r of records) await sink.deliver(r, context(r));
};
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.fail('resolved'),
    (err: unknown) => err as Error,
  );

describe('postgres sink erase options', () => {
  it('find the rows by the key column when it holds the id, else by the first column that holds it alone', () => {
    const idColumn = (options: Record<string, unknown>) => {
      const found = postgresSink.options.parse(options).idColumn;
      return found && { name: found.name, value: found.value('X') };
    };
    expect(idColumn({})).toEqual({ name: 'id', value: 'X' });
    expect(idColumn({ columns: { call_id: '{{ id }}' }, key_column: 'call_id' })).toEqual({
      name: 'call_id',
      value: 'X',
    });
    expect(
      idColumn({ columns: { dedup: '{{ dedup_key }}', ref: 'call-{{id}}', other: '{{ id }}' }, key_column: 'dedup' }),
    ).toEqual({ name: 'ref', value: 'call-X' });
    // A column that mixes the id with anything else cannot be found by the id alone.
    expect(idColumn({ columns: { dedup: '{{ dedup_key }}', ref: '{{ hook }}-{{ id }}' }, key_column: 'dedup' })).toBe(
      undefined,
    );
  });

  it('leave out erase() when no column holds the id: the erasure then lists the sink for the operator', async () => {
    const options = postgresSink.options.parse({ columns: { dedup: '{{ dedup_key }}' }, key_column: 'dedup' });
    const sink = await postgresSink.open(options, { name: 'pg', dataDir: '/nonexistent', log, databaseUrl: url });
    expect(sink.erase).toBeUndefined();
    await sink.close!();
  });

  it('make an erasure against a database that is down a retryable error, as a delivery is', async () => {
    const port = await closedPort();
    const options = postgresSink.options.parse({ url: `postgres://callhook:s3cret-pw@127.0.0.1:${port}/db` });
    const sink = await postgresSink.open(options, { name: 'pg', dataDir: '/nonexistent', log });
    const err = await failure(sink.erase!([id(1)], eraseContext()));
    expect(err).toBeInstanceOf(RetryableError);
    expect(err.message).toMatch(new RegExp(`^postgres 127\\.0\\.0\\.1:${port}: `));
    expect(err.message).not.toContain('s3cret');
    await sink.close!();
  });
});

describe.skipIf(!url)('postgres sink erase on a real PostgreSQL', () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let admin: pg.Client;
  const sinks: Sink[] = [];
  let counter = 0;

  beforeAll(async () => {
    db = await freshDatabase(url!, 'callhook_erase');
    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
  });
  afterAll(async () => {
    for (const sink of sinks) await sink.close?.();
    await admin?.end();
    await db?.drop();
  });

  const open = async (options: Record<string, unknown> = {}) => {
    const sink = await postgresSink.open(postgresSink.options.parse(options), {
      name: `pg${++counter}`,
      dataDir: '/nonexistent',
      log,
      databaseUrl: db.url,
    });
    sinks.push(sink);
    return sink;
  };
  const column = async (sql: string) => (await admin.query(sql)).rows.map((row) => Object.values(row)[0]);

  it('deletes the rows of the erased records from callhook’s own table, leaves the others, and counts the rows', async () => {
    const sink = await open({ table: 'own_erase' });
    await deliverAll(
      sink,
      [1, 2, 3, 4, 5].map((n) => record(n)),
    );
    // An edited record has one row, replaced: it is erased once.
    await deliverAll(sink, [record(2, { revision: 2, data: { first_name: 'Asha R.' } })]);

    expect(await sink.erase!([id(2), id(4), id(99)], eraseContext())).toBe(2);

    expect(await column('SELECT id FROM own_erase ORDER BY id')).toEqual([id(1), id(3), id(5)]);
    expect(await sink.erase!([id(2), id(4)], eraseContext())).toBe(0);
    expect(await sink.erase!([], eraseContext())).toBe(0);
    // The sink goes on delivering.
    await deliverAll(sink, [record(6)]);
    expect(await column('SELECT count(*)::int FROM own_erase')).toEqual([4]);
  });

  it('deletes from the user’s table by the column mapped to the id, also when it is not the key or holds more text', async () => {
    await admin.query(`CREATE TABLE user_calls (
      ref text NOT NULL, dedup text PRIMARY KEY, phone text, processed_at timestamptz)`);
    const sink = await open({
      table: 'user_calls',
      key_column: 'dedup',
      columns: { dedup: '{{ dedup_key }}', ref: 'call-{{ id }}', phone: '{{ phone_number }}' },
    });
    await deliverAll(
      sink,
      [1, 2, 3].map((n) => record(n)),
    );
    // A row of the user's own, with no call behind it, is never touched.
    await admin.query(`INSERT INTO user_calls (ref, dedup) VALUES ('manual', 'manual')`);

    expect(await sink.erase!([id(1), id(3)], eraseContext())).toBe(2);

    expect(await column('SELECT ref FROM user_calls ORDER BY ref')).toEqual([`call-${id(2)}`, 'manual']);
  });

  it('finds the id in a jsonb column too', async () => {
    await admin.query(`CREATE TABLE json_calls (key jsonb NOT NULL UNIQUE, phone text)`);
    const sink = await open({
      table: 'json_calls',
      key_column: 'key',
      columns: { key: '{{ id }}', phone: '{{ phone_number }}' },
    });
    await deliverAll(
      sink,
      [1, 2].map((n) => record(n)),
    );
    expect(await sink.erase!([id(2)], eraseContext())).toBe(1);
    expect(await column(`SELECT key #>> '{}' FROM json_calls`)).toEqual([id(1)]);
  });

  it('says PostgreSQL’s own words, permanent, when the user’s table is gone', async () => {
    await admin.query(`CREATE TABLE gone_calls (call_id uuid PRIMARY KEY)`);
    const sink = await open({ table: 'gone_calls', key_column: 'call_id', columns: { call_id: '{{ id }}' } });
    await deliverAll(sink, [record(1)]);
    await admin.query('DROP TABLE gone_calls');
    const err = await failure(sink.erase!([id(1)], eraseContext()));
    expect(err).toBeInstanceOf(PermanentError);
    expect(err.message).toMatch(/relation "public.gone_calls" does not exist \(SQLSTATE 42P01\)/);
  });
});
