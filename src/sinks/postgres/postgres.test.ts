import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../../../test/helpers/database.js';
import { closedPort, until } from '../../../test/helpers/server.js';
import { serviceUrl } from '../../../test/helpers/services.js';
import { ConfigError } from '../../config.js';
import type { CallRecord } from '../../record.js';
import { PermanentError, RetryableError } from '../errors.js';
import type { Sink } from '../sink.js';
import { deliveryError } from './errors.js';
import { postgresSink } from './postgres.js';

const log = pino({ level: 'silent' });
const url = serviceUrl('postgres');

const record = (over: Partial<CallRecord> = {}): CallRecord => ({
  id: '019a0000-0000-7000-8000-000000000001',
  hook: 'end-of-call',
  dedup_key: 'call_id:c1',
  received_at: '2026-11-21T10:00:00.000Z',
  source: 'webhook',
  revision: 1,
  data: { first_name: 'Asha', phone_number: '+919812345678', call_duration: 184 },
  extra: { campaign: 'diwali' },
  problems: [],
  ...over,
});
const keyOf = (r: CallRecord) => `${r.id}:pg${r.revision > 1 ? `:r${r.revision}` : ''}`;
const context = (r: CallRecord, signal = new AbortController().signal) => ({
  attempt: 1,
  idempotencyKey: keyOf(r),
  signal,
  log,
});
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.fail('resolved'),
    (err: unknown) => err as Error,
  );
/** The option path and message, as the registry prints them at start-up. */
const problem = (options: Record<string, unknown>) => {
  const issue = postgresSink.options.safeParse(options).error?.issues[0];
  return issue && `${issue.path.join('.')}: ${issue.message}`;
};

describe('postgres sink options', () => {
  it('default to callhook_calls keyed by id, the record as its columns, a higher revision replacing the row', () => {
    const options = postgresSink.options.parse({});
    expect(options).toMatchObject({
      url: undefined,
      table: 'callhook_calls',
      keyColumn: 'id',
      ownTable: true,
      replacesOnRevision: true,
    });
    expect(options.columns.targets).toEqual([
      'id',
      'hook',
      'dedup_key',
      'received_at',
      'source',
      'revision',
      'data',
      'extra',
      'problems',
    ]);
  });

  it('refuse a name that is not a plain identifier, naming the option', () => {
    expect(problem({ table: 'calls; DROP TABLE calls' })).toMatch(
      /^table: "calls; DROP TABLE calls" is not a plain SQL identifier/,
    );
    expect(problem({ table: 'public.calls' })).toMatch(/^table: .*not a plain SQL identifier/);
    expect(problem({ table: 'x'.repeat(64) })).toMatch(/^table: .*longer than 63 bytes/);
    expect(problem({ columns: { id: '{{ id }}', 'first name': '{{ first_name }}' } })).toMatch(
      /^columns\.first name: column "first name" is not a plain SQL identifier/,
    );
    expect(problem({ columns: { 'call"id': '{{ id }}' }, key_column: 'call"id' })).toMatch(
      /^(columns\.call"id|key_column): .*not a plain SQL identifier/,
    );
  });

  it('refuse a url that is not PostgreSQL, without echoing it', () => {
    expect(problem({ url: 'mysql://root:hunter2@db/x' })).toBe('url: url must be a postgres:// or postgresql:// URL');
  });

  it('refuse columns that leave out the key, and a key other than id for callhook’s own table', () => {
    expect(problem({ columns: { phone: '{{ phone_number }}' } })).toMatch(
      /^columns: columns must map the key column "id"/,
    );
    expect(problem({ columns: { call_id: '{{ id }}' }, key_column: 'id' })).toMatch(
      /^columns: columns must map the key column "id"/,
    );
    expect(problem({ key_column: 'dedup_key' })).toMatch(/^key_column: key_column can only be "id" without columns/);
    expect(problem({ columns: { id: '{{ id }}', phone: '{{ nope.x }}' } })).toMatch(
      /^columns\.phone: \{\{ nope\.x \}\}: unknown root "nope"/,
    );
  });

  it('replace on a higher revision with columns only when the map has a revision column', () => {
    expect(postgresSink.options.parse({ columns: { id: '{{ id }}' } })).toMatchObject({
      ownTable: false,
      replacesOnRevision: false,
    });
    expect(postgresSink.options.parse({ columns: { id: '{{ id }}', revision: '{{ revision }}' } })).toMatchObject({
      replacesOnRevision: true,
    });
  });

  it('refuse at start-up a sink with neither url nor DATABASE_URL, naming the option', () => {
    const create = () =>
      postgresSink.open(postgresSink.options.parse({}), { name: 'warehouse', dataDir: '/nonexistent', log });
    expect(create).toThrow('sink "warehouse" (postgres): url is not set, and there is no DATABASE_URL');
    // A ConfigError is a mistake in the config, which stops start-up (registry.ts), not an outage waited out.
    expect(create).toThrow(ConfigError);
  });

  it('do not connect at start-up: a database that is down makes each delivery a retryable error, its URL unquoted', async () => {
    const port = await closedPort();
    const options = postgresSink.options.parse({ url: `postgres://callhook:s3cret-pw@127.0.0.1:${port}/db` });
    const sink = await postgresSink.open(options, { name: 'pg', dataDir: '/nonexistent', log });
    const err = await failure(sink.deliver(record(), context(record())));
    expect(err).toBeInstanceOf(RetryableError);
    expect(err.message).toMatch(new RegExp(`^postgres 127\\.0\\.0\\.1:${port}: `));
    expect(err.message).not.toContain('s3cret');
    await sink.close!();
  });
});

describe('postgres errors', () => {
  const serverError = (code: string, message: string, detail?: string) =>
    Object.assign(new pg.DatabaseError(message, 0, 'error'), { code, detail });

  it('are permanent for what the statement itself did wrong: a constraint, a type, a missing table, a refused login', () => {
    for (const code of ['23505', '23502', '23514', '22P02', '22001', '42P01', '42703', '42501', '28P01', '3D000']) {
      expect(deliveryError(serverError(code, 'refused'), 'db:5432'), code).toBeInstanceOf(PermanentError);
    }
    expect(
      deliveryError(
        serverError(
          '23505',
          'duplicate key value violates unique constraint "calls_email_key"',
          'Key (email)=(a@b.c) already exists.',
        ),
        'db:5432',
      ).message,
    ).toBe(
      'postgres db:5432: duplicate key value violates unique constraint "calls_email_key" (SQLSTATE 23505): Key (email)=(a@b.c) already exists.',
    );
  });

  it('are retryable for a connection lost or refused, a server shutting down, full or in recovery, a deadlock', () => {
    for (const code of [
      '08006',
      '08001',
      '57P01',
      '57P03',
      '53100',
      '53300',
      '40001',
      '40P01',
      '25006',
      '55P03',
      'XX000',
    ]) {
      expect(deliveryError(serverError(code, 'later'), 'db:5432'), code).toBeInstanceOf(RetryableError);
    }
    // Node's own codes are no SQLSTATE, even with five letters.
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'EPIPE']) {
      expect(deliveryError(Object.assign(new Error(`connect ${code}`), { code }), 'db:5432'), code).toBeInstanceOf(
        RetryableError,
      );
    }
    expect(deliveryError(new Error('Connection terminated unexpectedly'), 'db:5432')).toBeInstanceOf(RetryableError);
  });
});

describe.skipIf(!url)('postgres sink on a real PostgreSQL', () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let admin: pg.Client;
  const sinks: Sink[] = [];
  const roles: string[] = [];
  let counter = 0;

  beforeAll(async () => {
    db = await freshDatabase(url!, 'callhook_sink');
    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
  });
  afterAll(async () => {
    for (const sink of sinks) await sink.close?.();
    await admin.end();
    await db.drop();
    const server = new pg.Client({ connectionString: url });
    await server.connect();
    for (const role of roles) await server.query(`DROP ROLE IF EXISTS ${role}`);
    await server.end();
  });

  /** A sink on this file's database; `name` also names its connections (application_name). */
  const open = async (
    options: Record<string, unknown> = {},
    { databaseUrl = db.url, name = `pg${++counter}` } = {},
  ) => {
    const sink = await postgresSink.open(postgresSink.options.parse(options), {
      name,
      dataDir: '/nonexistent',
      log,
      databaseUrl,
    });
    sinks.push(sink);
    return sink;
  };
  const rows = async (sql: string) => (await admin.query(sql)).rows;
  const table = () => `t_${++counter}`;

  it('creates callhook_calls when missing, with the documented columns, and writes the record into it', async () => {
    const sink = await open();
    const r = record({
      conflicts_with: undefined,
      problems: [{ field: 'email_address', code: 'invalid_format', message: 'not an email', value: 'asha@' }],
    });
    await sink.deliver(r, context(r));
    const columns = await rows(
      `SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'callhook_calls' ORDER BY ordinal_position`,
    );
    expect(columns.map((c) => `${c.column_name} ${c.data_type}`)).toEqual([
      'id uuid',
      'hook text',
      'dedup_key text',
      'received_at timestamp with time zone',
      'source text',
      'revision integer',
      'data jsonb',
      'extra jsonb',
      'problems jsonb',
    ]);
    const [row] = await rows(
      `SELECT id, hook, dedup_key, received_at, source, revision, data, extra, problems FROM callhook_calls`,
    );
    expect(row).toEqual({
      id: r.id,
      hook: 'end-of-call',
      dedup_key: 'call_id:c1',
      received_at: new Date(r.received_at),
      source: 'webhook',
      revision: 1,
      data: r.data,
      extra: r.extra,
      problems: r.problems,
    });
  });

  it('leaves one row for a repeat, replaces it with a higher revision (the :r2 delivery), and ignores a lower one arriving late', async () => {
    const sink = await open({ table: 'revisions' });
    const first = record({ id: '019a0000-0000-7000-8000-0000000000a1' });
    await sink.deliver(first, context(first));
    // A repeat is the same record; had it changed anyway, it still changes nothing.
    await sink.deliver({ ...first, data: { first_name: 'Someone else' } }, context(first));
    expect(await rows(`SELECT revision, data->>'first_name' AS name FROM revisions`)).toEqual([
      { revision: 1, name: 'Asha' },
    ]);

    const edited = { ...first, revision: 2, data: { ...first.data, first_name: 'Asha R.' } };
    expect(context(edited).idempotencyKey).toBe(`${first.id}:pg:r2`);
    await sink.deliver(edited, context(edited));
    await sink.deliver(first, context(first));
    expect(await rows(`SELECT revision, data->>'first_name' AS name FROM revisions`)).toEqual([
      { revision: 2, name: 'Asha R.' },
    ]);
  });

  it('takes the table another replica created at the same moment', async () => {
    // The other replica's CREATE TABLE, not yet committed: the sinks find no table, create one, and wait on its
    // catalog rows until the commit, then meet them as a duplicate.
    const other = new pg.Client({ connectionString: db.url });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query(
        `CREATE TABLE raced (id uuid PRIMARY KEY, hook text, dedup_key text, received_at timestamptz, source text, revision integer, data jsonb, extra jsonb, problems jsonb)`,
      );
      const name = `raced_${Math.random().toString(36).slice(2, 8)}`;
      const replicas = await Promise.all(
        Array.from({ length: 3 }, (_, i) => open({ table: 'raced' }, { name: `${name}_${i}` })),
      );
      const delivered = Promise.all(
        replicas.map((sink, i) => {
          const r = record({ id: `019a0000-0000-7000-8000-${String(900 + i).padStart(12, '0')}` });
          return sink.deliver(r, context(r));
        }),
      );
      const waiting = `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name LIKE $1 AND wait_event_type = 'Lock'`;
      await until(
        async () => (await admin.query<{ n: number }>(waiting, [`callhook sink ${name}_%`])).rows[0]!.n === 3,
      );
      await other.query('COMMIT');
      await delivered;
    } finally {
      await other.end();
    }
    expect(await rows('SELECT count(*)::int AS n FROM raced')).toEqual([{ n: 3 }]);
  });

  it('creates the table in the connection’s default schema (search_path)', async () => {
    await admin.query('CREATE SCHEMA reports');
    const inReports = `${db.url}?options=${encodeURIComponent('-c search_path=reports')}`;
    const sink = await open({}, { databaseUrl: inReports });
    await sink.deliver(record(), context(record()));
    expect((await rows('SELECT count(*)::int AS n FROM reports.callhook_calls'))[0]).toEqual({ n: 1 });
  });

  it('writes into a table that exists with a role that may not create one', async () => {
    const role = `callhook_writer_${Math.random().toString(36).slice(2, 8)}`;
    roles.push(role);
    const name = table();
    await admin.query(`CREATE ROLE ${role} LOGIN`);
    await admin.query(
      `CREATE TABLE ${name} (id uuid PRIMARY KEY, hook text, dedup_key text, received_at timestamptz, source text, revision integer, data jsonb, extra jsonb, problems jsonb)`,
    );
    await admin.query(`GRANT SELECT, INSERT, UPDATE ON ${name} TO ${role}`);
    const asRole = new URL(db.url);
    asRole.username = role;
    const sink = await open({ table: name }, { databaseUrl: asRole.toString() });
    await sink.deliver(record(), context(record()));
    expect(await rows(`SELECT hook FROM ${name}`)).toEqual([{ hook: 'end-of-call' }]);
  });

  it('writes the columns of a map into the user’s table: JSON into jsonb, a number into an integer, defaults for the rest', async () => {
    const name = table();
    await admin.query(`CREATE TABLE ${name} (
      call_id text PRIMARY KEY, phone text, duration integer, fields jsonb, first jsonb, label text,
      notes text DEFAULT 'none', created_at timestamptz NOT NULL DEFAULT now(), tags text[])`);
    const sink = await open({
      table: name,
      key_column: 'call_id',
      columns: {
        call_id: '{{ id }}',
        phone: '{{ phone_number }}',
        duration: '{{ call_duration }}',
        fields: '{{ data }}',
        first: '{{ first_name }}',
        label: 'Call from {{ first_name }}',
        notes: '{{ call_summary }}',
      },
    });
    const r = record();
    await sink.deliver(r, context(r));
    const [row] = await rows(
      `SELECT call_id, phone, duration, fields, first, label, notes, created_at IS NOT NULL AS stamped, tags FROM ${name}`,
    );
    expect(row).toEqual({
      call_id: r.id,
      phone: '+919812345678',
      duration: 184,
      fields: r.data,
      first: 'Asha',
      label: 'Call from Asha',
      notes: 'none',
      stamped: true,
      tags: null,
    });
    // No revision column: a later revision is a repeat as far as this table goes.
    const edited = { ...r, revision: 2, data: { ...r.data, first_name: 'Asha R.' } };
    await sink.deliver(edited, context(edited));
    expect(await rows(`SELECT first FROM ${name}`)).toEqual([{ first: 'Asha' }]);
  });

  it('with a revision column, replaces the mapped columns with a higher revision and keeps the consumer’s own', async () => {
    const name = table();
    await admin.query(
      `CREATE TABLE ${name} (id uuid PRIMARY KEY, revision integer, first_name text, processed_at timestamptz)`,
    );
    const sink = await open({
      table: name,
      columns: { id: '{{ id }}', revision: '{{ revision }}', first_name: '{{ first_name }}' },
    });
    const r = record();
    await sink.deliver(r, context(r));
    await admin.query(`UPDATE ${name} SET processed_at = '2026-11-21T11:00:00Z'`);
    const edited = { ...r, revision: 2, data: { ...r.data, first_name: 'Asha R.' } };
    await sink.deliver(edited, context(edited));
    await sink.deliver(r, context(r));
    expect(await rows(`SELECT revision, first_name, processed_at FROM ${name}`)).toEqual([
      { revision: 2, first_name: 'Asha R.', processed_at: new Date('2026-11-21T11:00:00Z') },
    ]);
  });

  it('makes every delivery dead while the key column has no unique index, and writes once one is added', async () => {
    const name = table();
    await admin.query(`CREATE TABLE ${name} (id text, phone text)`);
    await admin.query(`CREATE UNIQUE INDEX ON ${name} (id) WHERE phone IS NOT NULL`);
    const sink = await open({ table: name, columns: { id: '{{ id }}', phone: '{{ phone_number }}' } });
    const err = await failure(sink.deliver(record(), context(record())));
    expect(err).toBeInstanceOf(PermanentError);
    expect(err.message).toBe(
      `postgres ${hostOf(db.url)}: key_column "id" of table public.${name} must be the primary key or carry a unique index (on that column alone, with no WHERE), so that a delivery made again meets its row`,
    );
    expect(await rows(`SELECT * FROM ${name}`)).toEqual([]);
    await admin.query(`CREATE UNIQUE INDEX ON ${name} (id)`);
    await sink.deliver(record(), context(record()));
    await sink.deliver(record(), context(record()));
    expect(await rows(`SELECT id FROM ${name}`)).toEqual([{ id: record().id }]);
  });

  it('says PostgreSQL’s own words for a missing table, a missing column, a type mismatch and a constraint, all permanent', async () => {
    const missing = await failure(
      (await open({ table: 'nowhere', columns: { id: '{{ id }}' } })).deliver(record(), context(record())),
    );
    expect(missing).toBeInstanceOf(PermanentError);
    expect(missing.message).toMatch(/: table public\.nowhere does not exist/);

    const name = table();
    await admin.query(
      `CREATE TABLE ${name} (id text PRIMARY KEY, duration integer, phone text CHECK (phone LIKE '+1%'))`,
    );
    const noColumn = await failure(
      (await open({ table: name, columns: { id: '{{ id }}', seconds: '{{ call_duration }}' } })).deliver(
        record(),
        context(record()),
      ),
    );
    expect(noColumn.message).toMatch(new RegExp(`: column "seconds" of relation "public.${name}" does not exist$`));

    const typed = await failure(
      (await open({ table: name, columns: { id: '{{ id }}', duration: '{{ first_name }}' } })).deliver(
        record(),
        context(record()),
      ),
    );
    expect(typed).toBeInstanceOf(PermanentError);
    expect(typed.message).toMatch(/: invalid input syntax for type integer: "Asha" \(SQLSTATE 22P02\)$/);

    const checked = await failure(
      (await open({ table: name, columns: { id: '{{ id }}', phone: '{{ phone_number }}' } })).deliver(
        record(),
        context(record()),
      ),
    );
    expect(checked).toBeInstanceOf(PermanentError);
    expect(checked.message).toMatch(/violates check constraint .* \(SQLSTATE 23514\)/);
  });

  it('refuses a record whose key template finds nothing, rather than let the key take a default', async () => {
    const name = table();
    await admin.query(`CREATE TABLE ${name} (call_id text PRIMARY KEY)`);
    const sink = await open({ table: name, key_column: 'call_id', columns: { call_id: '{{ extra.call_id }}' } });
    const err = await failure(sink.deliver(record(), context(record())));
    expect(err).toBeInstanceOf(PermanentError);
    expect(err.message).toMatch(/key column "call_id" has no value for this record/);
  });

  it('keeps a call whose text holds U+0000, which PostgreSQL cannot store, with U+FFFD in its place', async () => {
    const sink = await open({ table: 'nul_text' });
    const r = record({ id: '019a0000-0000-7000-8000-0000000000b1', hook: 'a\u0000b', data: { note: 'x\u0000y' } });
    await sink.deliver(r, context(r));
    expect(await rows(`SELECT hook, data->>'note' AS note FROM nul_text`)).toEqual([
      { hook: 'a\uFFFDb', note: 'x\uFFFDy' },
    ]);
  });

  it('reuses one connection across deliveries and closes its connections in close()', async () => {
    const name = `reuse_${Math.random().toString(36).slice(2, 8)}`;
    const sink = await open({ table: 'reused' }, { name });
    const application = `callhook sink ${name}`;
    for (let i = 0; i < 20; i++) {
      const r = record({ id: `019a0000-0000-7000-8000-${String(i).padStart(12, '0')}` });
      await sink.deliver(r, context(r));
    }
    expect((await rows('SELECT count(*)::int AS n FROM reused'))[0]).toEqual({ n: 20 });
    const connections = async () =>
      (
        await admin.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1',
          [application],
        )
      ).rows[0]!.n;
    expect(await connections()).toBe(1);
    await sink.close!();
    await sink.close!();
    // The server's backend leaves pg_stat_activity a moment after the client has said goodbye.
    await until(async () => (await connections()) === 0);
    const err = await failure(sink.deliver(record(), context(record())));
    expect(err.message).toMatch(/closed/);
  });

  it('creates callhook’s own table again when it was dropped while the sink ran, the attempt that met its absence retried', async () => {
    const sink = await open({ table: 'dropped' });
    await sink.deliver(record(), context(record()));
    await admin.query('DROP TABLE dropped');
    const err = await failure(sink.deliver(record(), context(record())));
    expect(err).toBeInstanceOf(RetryableError);
    expect(err.message).toMatch(/relation "public.dropped" does not exist \(SQLSTATE 42P01\)/);
    await sink.deliver(record(), context(record()));
    expect(await rows('SELECT count(*)::int AS n FROM dropped')).toEqual([{ n: 1 }]);
  });

  it('writes nothing for a delivery already given up', async () => {
    const sink = await open({ table: 'given_up' });
    const controller = new AbortController();
    controller.abort(new Error('timed out after 10 ms'));
    await failure(sink.deliver(record(), context(record(), controller.signal)));
    expect(await rows(`SELECT count(*)::int AS n FROM given_up`)).toEqual([{ n: 0 }]);
  });
});

function hostOf(databaseUrl: string): string {
  const { hostname, port } = new URL(databaseUrl);
  return `${hostname}:${port || '5432'}`;
}
