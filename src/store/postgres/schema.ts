import type { ClientBase } from 'pg';

/**
 * PostgreSQL migrations, applied in order; `schema_migrations` holds one row per migration that has run.
 * Append only: a released migration is never edited, a change is a new entry.
 *
 * The tables mirror sqlite/schema.ts, with three deliberate differences:
 * - `record` and `raw` are `json`, not `jsonb`: json keeps the text as written, so sinks get the same key order
 *   from either store, and it accepts `\u0000` in a string, which jsonb refuses (a sender's "\u0000" would
 *   otherwise turn into a 503 forever).
 * - ids compare with `COLLATE "C"`, byte order, so the time-ordered UUIDv7 cursor of listCalls sorts the same
 *   as in SQLite whatever the database's locale.
 * - received_at and started_at are timestamptz, so purge and the admin date filters compare times, not text;
 *   the worker's clock values (next_attempt_at, lease_until, updated_at) stay epoch milliseconds in bigint,
 *   compared against the same Date.now() the worker uses for retryAt.
 */
export const POSTGRES_MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE calls (
    id text COLLATE "C" PRIMARY KEY,
    hook text NOT NULL,
    dedup_key text NOT NULL,
    status text NOT NULL,
    source text NOT NULL,
    received_at timestamptz NOT NULL,
    record json NOT NULL,
    raw json NOT NULL,
    duplicates integer NOT NULL DEFAULT 0,
    UNIQUE (hook, dedup_key)
  );
  CREATE TABLE deliveries (
    id bigserial PRIMARY KEY,
    call_id text COLLATE "C" NOT NULL REFERENCES calls (id) ON DELETE CASCADE,
    sink text NOT NULL,
    state text NOT NULL,
    attempts integer NOT NULL DEFAULT 0,
    next_attempt_at bigint NOT NULL,
    lease_until bigint,
    last_error text,
    updated_at bigint NOT NULL,
    UNIQUE (call_id, sink)
  );
  CREATE INDEX deliveries_due ON deliveries (sink, state, next_attempt_at);
  CREATE TABLE attempts (
    id bigserial PRIMARY KEY,
    delivery_id bigint NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
    attempt integer NOT NULL,
    started_at timestamptz NOT NULL,
    duration_ms double precision NOT NULL,
    outcome text NOT NULL,
    http_status integer,
    error text
  );
  CREATE INDEX attempts_delivery ON attempts (delivery_id);
  CREATE TABLE receipts (
    id bigserial PRIMARY KEY,
    hook text NOT NULL,
    received_at timestamptz NOT NULL,
    method text NOT NULL,
    content_type text,
    size integer NOT NULL,
    status integer NOT NULL,
    outcome text NOT NULL,
    call_id text COLLATE "C",
    error text,
    raw_body bytea
  );
  CREATE INDEX receipts_call ON receipts (call_id);
  CREATE INDEX receipts_received ON receipts (received_at);
  CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL);
  `,
  // The age of the oldest pending delivery (docs/reference.md#metrics, /metrics) needs each delivery's creation time.
  // The indexes serve the admin lists: deliveries by state and sink in id order, calls by status or date.
  `
  ALTER TABLE deliveries ADD COLUMN created_at bigint;
  UPDATE deliveries SET created_at = updated_at;
  ALTER TABLE deliveries ALTER COLUMN created_at SET NOT NULL;
  CREATE INDEX deliveries_state_sink ON deliveries (state, sink, id);
  CREATE INDEX calls_status ON calls (status, id);
  CREATE INDEX calls_received ON calls (received_at);
  `,
  // Reconciliation and in-call lookups find calls by the caller's number and by the recording's URL. The
  // expressions are those of postgres/admin.ts's dataField, character for character, or the planner ignores them.
  `
  CREATE INDEX calls_phone ON calls ((replace(record::text, '\\u0000', '\\ufffd')::json -> 'data' ->> 'phone_number'), id);
  CREATE INDEX calls_recording ON calls ((replace(record::text, '\\u0000', '\\ufffd')::json -> 'data' ->> 'recording_url'), id);
  `,
  // docs/reference.md#deduplication and docs/reference.md#operating, as SQLite's migration 4: a call with nothing in it
  // has no dedup key (NULL, which UNIQUE never matches); a repeat is compared with the content hash of the call as
  // first received (NULL for a call stored before, or by a replica of the version before during a rolling upgrade:
  // computed from its record when a repeat meets it); a refused request's receipt keeps its query string and says as
  // which call it was ingested. Nothing is rewritten: each ALTER changes the catalogue only, so replicas of the version
  // before keep committing beside this one. The partial index reads the receipts once, refused ones only kept in it.
  `
  ALTER TABLE calls ALTER COLUMN dedup_key DROP NOT NULL;
  ALTER TABLE calls ADD COLUMN content_hash text;
  ALTER TABLE receipts ADD COLUMN query text;
  ALTER TABLE receipts ADD COLUMN ingested_as text COLLATE "C";
  CREATE INDEX receipts_refused ON receipts (id) WHERE outcome = 'rejected';
  `,
  // docs/reference.md#metrics: a /metrics scrape costs the same at ten deliveries and at ten million. The counts by
  // sink and state are kept as the deliveries change, by triggers, so every writer keeps them right in its own
  // transaction: intake, worker, admin retry, purge's cascade, a hand-written UPDATE, and a replica of the version
  // before during a rolling upgrade. The lock keeps writers out from the count that fills the table to the triggers'
  // creation (readers go on); it is held for one count of the deliveries, as an index build would be.
  //
  // Replicas commit at once, and a count row is locked by the transaction that changed it until it commits: one
  // row per (sink, state) would queue every intake commit of a sink behind the others. Each connection adds to a
  // shard of its own (its backend's pid modulo 16), so two transactions meet only when their pids share a
  // remainder; a scrape adds the shards up. A long transaction (purge) names a shard of its own (16, through
  // `callhook.count_shard`), so a worker finishing a delivery never waits for it. A shard's figure may go below
  // zero (a delivery counted in one shard and moved on by a connection of another); the sums are what is true.
  //
  // Statement triggers with transition tables add one row per (sink, state) a statement touched, not one per
  // delivery: a claim of 50 deliveries writes two rows. Rows are added in (sink, state) order, so two
  // transactions of one shard lock them in the same order and cannot deadlock within a statement.
  `
  LOCK TABLE deliveries IN SHARE ROW EXCLUSIVE MODE;
  CREATE TABLE delivery_counts (
    sink text NOT NULL,
    state text NOT NULL,
    shard smallint NOT NULL,
    count bigint NOT NULL,
    PRIMARY KEY (sink, state, shard)
  );
  INSERT INTO delivery_counts (sink, state, shard, count) SELECT sink, state, 0, count(*) FROM deliveries GROUP BY sink, state;
  CREATE FUNCTION delivery_counts_follow() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
  DECLARE
    -- An unset custom setting reads as NULL, and as '' once a SET LOCAL of it has ended.
    my_shard smallint := coalesce(nullif(current_setting('callhook.count_shard', true), '')::smallint, (pg_backend_pid() % 16)::smallint);
  BEGIN
    IF TG_OP = 'TRUNCATE' THEN
      DELETE FROM delivery_counts;
    -- Each branch reads only the transition tables its trigger declares.
    ELSIF TG_OP = 'INSERT' THEN
      INSERT INTO delivery_counts AS c (sink, state, shard, count)
      SELECT sink, state, my_shard, count(*) FROM new_rows GROUP BY sink, state ORDER BY sink, state
      ON CONFLICT (sink, state, shard) DO UPDATE SET count = c.count + excluded.count;
    ELSIF TG_OP = 'DELETE' THEN
      INSERT INTO delivery_counts AS c (sink, state, shard, count)
      SELECT sink, state, my_shard, -count(*) FROM old_rows GROUP BY sink, state ORDER BY sink, state
      ON CONFLICT (sink, state, shard) DO UPDATE SET count = c.count + excluded.count;
    ELSE
      -- Every updated row leaves its old state and enters its new one; a row whose state stayed adds nothing.
      INSERT INTO delivery_counts AS c (sink, state, shard, count)
      SELECT sink, state, my_shard, sum(delta) FROM (
        SELECT sink, state, 1 AS delta FROM new_rows UNION ALL SELECT sink, state, -1 FROM old_rows
      ) d GROUP BY sink, state HAVING sum(delta) <> 0 ORDER BY sink, state
      ON CONFLICT (sink, state, shard) DO UPDATE SET count = c.count + excluded.count;
    END IF;
    RETURN NULL;
  END $$;
  CREATE TRIGGER delivery_counts_insert AFTER INSERT ON deliveries REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION delivery_counts_follow();
  CREATE TRIGGER delivery_counts_update AFTER UPDATE ON deliveries REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION delivery_counts_follow();
  CREATE TRIGGER delivery_counts_delete AFTER DELETE ON deliveries REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION delivery_counts_follow();
  CREATE TRIGGER delivery_counts_truncate AFTER TRUNCATE ON deliveries
    FOR EACH STATEMENT EXECUTE FUNCTION delivery_counts_follow();
  `,
  // docs/reference.md#what-every-sink-shares, as SQLite's migration 6: one row a sink. `paused` is an operator's last
  // word (NULL: never given, and the config's `paused` decides), kept here so it holds for every replica and survives a
  // restart; `paused_until` is the end of a 429's wait, so every replica waits it out, not only the one that met it.
  `
  CREATE TABLE sink_state (
    sink text PRIMARY KEY,
    paused boolean,
    paused_changed_at bigint,
    paused_until bigint,
    last_success_at bigint,
    last_error text,
    last_error_at bigint
  );
  `,
  // As SQLite's migration 7: what a successful attempt says (docs/reference.md#crm-sinks). A catalogue change only.
  `ALTER TABLE attempts ADD COLUMN note text;`,
  // As SQLite's migration 8 (docs/reference.md#editing-a-call): a call's edits and review marks, a new empty table. Its
  // foreign key locks calls against writes until this migration commits, which checking an empty table makes an
  // instant.
  `
  CREATE TABLE call_edits (
    id bigserial PRIMARY KEY,
    call_id text COLLATE "C" NOT NULL REFERENCES calls (id) ON DELETE CASCADE,
    revision integer NOT NULL,
    reviewed boolean NOT NULL DEFAULT false,
    entry json NOT NULL
  );
  CREATE INDEX call_edits_call ON call_edits (call_id, revision);
  `,
  // As SQLite's migration 9 (docs/reference.md#test-traffic): the calls that are not test traffic, in id order, for the
  // lists and the review queue that leave test traffic out (the predicate is store/admin-query.ts's NOT_TEST, which the
  // planner must be able to prove from a query's WHERE); and each receipt's request source, for the overview's counts
  // (NULL: written before, or by a replica of the version before). The index build holds writes to calls back for its
  // length, as migration 2's and 3's did; the column is a catalogue change only.
  `
  CREATE INDEX calls_live ON calls (id) WHERE source NOT IN ('replay', 'simulate');
  ALTER TABLE receipts ADD COLUMN source text;
  `,
  // As SQLite's migration 10 (docs/reference.md#alerts): incidents, one open a rule and key between every replica (the
  // partial unique index an opening's INSERT ... ON CONFLICT meets), and their messages, an outbox of their own. New
  // tables: nothing waits on them.
  `
  CREATE TABLE incidents (
    id text COLLATE "C" PRIMARY KEY,
    rule text NOT NULL,
    key text,
    opened_at timestamptz NOT NULL,
    last_event_at timestamptz NOT NULL,
    acknowledged_at timestamptz,
    acknowledged_by text,
    resolved_at timestamptz,
    counts jsonb NOT NULL,
    summary text NOT NULL
  );
  CREATE UNIQUE INDEX incidents_open ON incidents (rule, coalesce(key, '')) WHERE resolved_at IS NULL;
  CREATE TABLE alert_messages (
    id bigserial PRIMARY KEY,
    incident_id text COLLATE "C" NOT NULL REFERENCES incidents (id) ON DELETE CASCADE,
    channel text NOT NULL,
    kind text NOT NULL,
    incident json NOT NULL,
    state text NOT NULL,
    attempts integer NOT NULL DEFAULT 0,
    next_attempt_at bigint NOT NULL,
    lease_until bigint,
    last_error text,
    updated_at bigint NOT NULL
  );
  CREATE INDEX alert_messages_due ON alert_messages (state, next_attempt_at);
  CREATE INDEX alert_messages_incident ON alert_messages (incident_id);
  `,
  // As SQLite's migration 11 (docs/reference.md#erasure): the erasure log, a keyed hash of the person and never the
  // person.
  `
  CREATE TABLE erasures (
    id text COLLATE "C" PRIMARY KEY,
    at timestamptz NOT NULL,
    actor text NOT NULL,
    kind text NOT NULL,
    hash text NOT NULL,
    counts jsonb NOT NULL
  );
  CREATE INDEX erasures_hash ON erasures (hash);
  `,
  // As SQLite's migration 12 (docs/reference.md#operators): users, their one-time links, personal tokens and dashboard
  // sessions (digests of their secrets), each going with its user; and the audit log, read newest first under any one
  // filter down an index ending in its id, appended to and aged out by retention.audit, never changed: the trigger
  // refuses an UPDATE from any client, as SQLite's does. New tables: nothing waits on them.
  `
  CREATE TABLE users (
    id text COLLATE "C" PRIMARY KEY,
    email text NOT NULL UNIQUE,
    role text NOT NULL,
    password_hash text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  );
  CREATE TABLE password_links (
    digest text PRIMARY KEY,
    user_id text COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at timestamptz
  );
  CREATE INDEX password_links_user ON password_links (user_id);
  CREATE TABLE tokens (
    id text COLLATE "C" PRIMARY KEY,
    user_id text COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name text NOT NULL,
    digest text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL,
    last_used_at timestamptz
  );
  CREATE INDEX tokens_user ON tokens (user_id);
  CREATE TABLE sessions (
    digest text PRIMARY KEY,
    user_id text COLLATE "C" REFERENCES users (id) ON DELETE CASCADE,
    key_digest text,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
  );
  CREATE INDEX sessions_user ON sessions (user_id);
  CREATE INDEX sessions_expires ON sessions (expires_at);
  CREATE TABLE audit_log (
    id bigserial PRIMARY KEY,
    at timestamptz NOT NULL,
    actor text NOT NULL,
    address text,
    action text NOT NULL,
    target text,
    outcome text NOT NULL,
    details jsonb
  );
  CREATE INDEX audit_log_at ON audit_log (at);
  CREATE INDEX audit_log_actor ON audit_log (actor, id);
  CREATE INDEX audit_log_action ON audit_log (action, id);
  CREATE INDEX audit_log_target ON audit_log (target, id);
  CREATE FUNCTION audit_log_unchanged() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    RAISE EXCEPTION 'the audit log is appended to, never changed (docs/reference.md#audit-log)';
  END
  $$;
  CREATE TRIGGER audit_log_unchanged BEFORE UPDATE ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_unchanged();
  `,
];

/** PostgreSQL folds unquoted names to lower case; allowing only these keeps `search_path` and DDL in agreement. */
export const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Runs the migrations that have not run yet, in one transaction holding an advisory lock: replicas that start
 * together queue on the lock, and each one after the first finds the work done. The lock is transaction-scoped
 * so a crash mid-migration releases it with the rollback.
 */
export async function migratePostgres(client: ClientBase, schema: string | undefined): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`callhook.migrate.${schema ?? ''}`]);
    // Under the lock: two concurrent CREATE SCHEMA IF NOT EXISTS can still collide on pg_namespace.
    if (schema) await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const { rows } = await client.query<{ version: number | null }>(
      'SELECT max(version) AS version FROM schema_migrations',
    );
    for (let v = rows[0]?.version ?? 0; v < POSTGRES_MIGRATIONS.length; v++) {
      await client.query(POSTGRES_MIGRATIONS[v]!);
      await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [v + 1]);
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}
