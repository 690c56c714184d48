/**
 * SQLite migrations, applied in order; `PRAGMA user_version` holds how many have run.
 * Append only: a released migration is never edited, a change is a new entry.
 */
export const SQLITE_MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE calls (
    id TEXT PRIMARY KEY,
    hook TEXT NOT NULL,
    dedup_key TEXT NOT NULL,
    status TEXT NOT NULL,
    source TEXT NOT NULL,
    received_at TEXT NOT NULL,
    record TEXT NOT NULL,
    raw TEXT NOT NULL,
    duplicates INTEGER NOT NULL DEFAULT 0,
    UNIQUE (hook, dedup_key)
  );
  CREATE TABLE deliveries (
    id INTEGER PRIMARY KEY,
    call_id TEXT NOT NULL REFERENCES calls (id) ON DELETE CASCADE,
    sink TEXT NOT NULL,
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    lease_until INTEGER,
    last_error TEXT,
    updated_at INTEGER NOT NULL,
    UNIQUE (call_id, sink)
  );
  CREATE INDEX deliveries_due ON deliveries (sink, state, next_attempt_at);
  CREATE TABLE attempts (
    id INTEGER PRIMARY KEY,
    delivery_id INTEGER NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
    attempt INTEGER NOT NULL,
    started_at TEXT NOT NULL,
    duration_ms REAL NOT NULL,
    outcome TEXT NOT NULL,
    http_status INTEGER,
    error TEXT
  );
  CREATE INDEX attempts_delivery ON attempts (delivery_id);
  CREATE TABLE receipts (
    id INTEGER PRIMARY KEY,
    hook TEXT NOT NULL,
    received_at TEXT NOT NULL,
    method TEXT NOT NULL,
    content_type TEXT,
    size INTEGER NOT NULL,
    status INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    call_id TEXT,
    error TEXT,
    raw_body BLOB
  );
  CREATE INDEX receipts_call ON receipts (call_id);
  CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  `,
  // The age of the oldest pending delivery (docs/reference.md#metrics, /metrics) needs each delivery's creation time.
  // SQLite adds a NOT NULL column only with a default; commitCall always sets it, the 0 is never read.
  // The indexes serve the admin lists: deliveries by state and sink in id order, calls by status or date.
  `
  ALTER TABLE deliveries ADD COLUMN created_at INTEGER NOT NULL DEFAULT 0;
  UPDATE deliveries SET created_at = updated_at;
  CREATE INDEX deliveries_state_sink ON deliveries (state, sink, id);
  CREATE INDEX calls_status ON calls (status, id);
  CREATE INDEX calls_received ON calls (received_at);
  `,
  // Reconciliation and in-call lookups find calls by the caller's number and by the recording's URL. The
  // expressions are those of sqlite/admin.ts's dataField, character for character, or the planner ignores them.
  `
  CREATE INDEX calls_phone ON calls (CAST(json_extract(record, '$.data.phone_number') AS TEXT), id);
  CREATE INDEX calls_recording ON calls (CAST(json_extract(record, '$.data.recording_url') AS TEXT), id);
  `,
  // docs/reference.md#deduplication and docs/reference.md#operating. A call with nothing in it has no dedup key (NULL,
  // which UNIQUE never matches); a repeat is compared with the content hash of the call as first received (NULL for a
  // call stored before, or by a serve of the version before during a rolling restart: computed from its record when a
  // repeat meets it); a refused request's receipt keeps its query string and says as which call it was ingested.
  // Nothing is rewritten, so the write lock is held for an instant whatever the size of the store, and a serve of the
  // version before keeps committing beside it: new columns are nullable, and `dedup_key` loses its NOT NULL by the
  // procedure https://sqlite.org/lang_altertable.html#otheralter gives for removing a NOT NULL (the schema text changed
  // in place, last, as ADD COLUMN reads the text's length; migrate() allows it and bumps schema_version).
  `
  ALTER TABLE calls ADD COLUMN content_hash TEXT;
  ALTER TABLE receipts ADD COLUMN query TEXT;
  ALTER TABLE receipts ADD COLUMN ingested_as TEXT;
  CREATE INDEX receipts_refused ON receipts (id) WHERE outcome = 'rejected';
  PRAGMA writable_schema = ON;
  UPDATE sqlite_schema SET sql = replace(sql, 'dedup_key TEXT NOT NULL', 'dedup_key TEXT') WHERE type = 'table' AND name = 'calls';
  PRAGMA writable_schema = OFF;
  `,
  // docs/reference.md#metrics: a /metrics scrape costs the same at ten deliveries and at ten million. The counts by
  // sink and state are kept as the deliveries change, by triggers, so every writer keeps them right in its own
  // transaction: intake, worker, admin retry, purge's cascade, a hand-written UPDATE, and a serve of the version before
  // on the same file during a rolling restart. The table is filled from one count of the rows there, in the migration's
  // write transaction, so no write falls between the count and the triggers.
  `
  CREATE TABLE delivery_counts (
    sink TEXT NOT NULL,
    state TEXT NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (sink, state)
  ) WITHOUT ROWID;
  INSERT INTO delivery_counts (sink, state, count) SELECT sink, state, COUNT(*) FROM deliveries GROUP BY sink, state;
  CREATE TRIGGER delivery_counts_insert AFTER INSERT ON deliveries BEGIN
    INSERT INTO delivery_counts (sink, state, count) VALUES (NEW.sink, NEW.state, 1)
      ON CONFLICT (sink, state) DO UPDATE SET count = count + 1;
  END;
  CREATE TRIGGER delivery_counts_update AFTER UPDATE OF state, sink ON deliveries
  WHEN OLD.state IS NOT NEW.state OR OLD.sink IS NOT NEW.sink BEGIN
    UPDATE delivery_counts SET count = count - 1 WHERE sink = OLD.sink AND state = OLD.state;
    INSERT INTO delivery_counts (sink, state, count) VALUES (NEW.sink, NEW.state, 1)
      ON CONFLICT (sink, state) DO UPDATE SET count = count + 1;
  END;
  CREATE TRIGGER delivery_counts_delete AFTER DELETE ON deliveries BEGIN
    UPDATE delivery_counts SET count = count - 1 WHERE sink = OLD.sink AND state = OLD.state;
  END;
  `,
  // docs/reference.md#what-every-sink-shares: what is kept of each sink besides its deliveries, one row a sink.
  // `paused` is an operator's last word (NULL: never given, and the config's `paused` decides); `paused_until` is the
  // end of a 429's wait, shared by every process; the last success and error are written by the worker with the attempt
  // it records.
  `
  CREATE TABLE sink_state (
    sink TEXT PRIMARY KEY,
    paused INTEGER,
    paused_changed_at INTEGER,
    paused_until INTEGER,
    last_success_at INTEGER,
    last_error TEXT,
    last_error_at INTEGER
  ) WITHOUT ROWID;
  `,
  // A successful attempt may say what it did that an operator should know (a CRM search that found several
  // contacts and used the most recently updated, docs/reference.md#crm-sinks). A column added, no row rewritten.
  `ALTER TABLE attempts ADD COLUMN note TEXT;`,
  // docs/reference.md#editing-a-call: a call's edits and review marks, kept with it (deleted with it by purge's
  // cascade). A new table and its index, empty: no row of calls is rewritten, so the write lock is held for an instant
  // and a serve of the version before keeps committing beside it. An edit rewrites its call's record in place, revision
  // + 1.
  `
  CREATE TABLE call_edits (
    id INTEGER PRIMARY KEY,
    call_id TEXT NOT NULL REFERENCES calls (id) ON DELETE CASCADE,
    revision INTEGER NOT NULL,
    reviewed INTEGER NOT NULL DEFAULT 0,
    entry TEXT NOT NULL
  );
  CREATE INDEX call_edits_call ON call_edits (call_id, revision);
  `,
  // docs/reference.md#test-traffic: the calls lists, the review queue and the overview leave test traffic (`replay`,
  // `simulate`) out unless asked. The partial index holds every other call in id order, so a page of them, newest
  // first, reads only them, however many thousands of simulated calls came last; the term is store/admin-query.ts's NOT_TEST,
  // which the planner must find in a query to use the index. A receipt keeps the source of its request, so the
  // overview's counts of requests leave a replay's out too (NULL: a receipt written before, or by the version before
  // during a rolling restart, counted as the sender's). The index is built under the write lock, once, as migration 2's
  // were; the column is added without rewriting a row.
  `
  CREATE INDEX calls_live ON calls (id) WHERE source NOT IN ('replay', 'simulate');
  ALTER TABLE receipts ADD COLUMN source TEXT;
  `,
  // docs/reference.md#alerts: incidents, one open a rule and key (the partial unique index, which every process's
  // insert meets), and their messages, an outbox of their own: each holds the incident as it was when it was queued.
  // New tables: nothing is rewritten.
  `
  CREATE TABLE incidents (
    id TEXT PRIMARY KEY,
    rule TEXT NOT NULL,
    key TEXT,
    opened_at TEXT NOT NULL,
    last_event_at TEXT NOT NULL,
    acknowledged_at TEXT,
    acknowledged_by TEXT,
    resolved_at TEXT,
    counts TEXT NOT NULL,
    summary TEXT NOT NULL
  );
  CREATE UNIQUE INDEX incidents_open ON incidents (rule, coalesce(key, '')) WHERE resolved_at IS NULL;
  CREATE TABLE alert_messages (
    id INTEGER PRIMARY KEY,
    incident_id TEXT NOT NULL REFERENCES incidents (id) ON DELETE CASCADE,
    channel TEXT NOT NULL,
    kind TEXT NOT NULL,
    incident TEXT NOT NULL,
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    lease_until INTEGER,
    last_error TEXT,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX alert_messages_due ON alert_messages (state, next_attempt_at);
  CREATE INDEX alert_messages_incident ON alert_messages (incident_id);
  `,
  // docs/reference.md#erasure: the erasure log, one row an erasure, holding a keyed hash of the person and never the
  // person; its key is kept in meta ('erasure-key'), made by the first erasure. A new table: nothing is rewritten.
  `
  CREATE TABLE erasures (
    id TEXT PRIMARY KEY,
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    kind TEXT NOT NULL,
    hash TEXT NOT NULL,
    counts TEXT NOT NULL
  );
  CREATE INDEX erasures_hash ON erasures (hash);
  `,
  // docs/reference.md#operators: the people who run callhook, their one-time links, personal tokens and dashboard
  // sessions (each secret kept as its digest, store/operators.ts), and the audit log. A user's links, tokens and
  // sessions go with the user (ON DELETE CASCADE, indexed by user so the cascade reads no whole table); an admin-token
  // session has no user. The audit log is read newest first under any one filter: each index ends in the rowid, so a
  // filtered page is read backward down one index, unsorted. It is appended to and aged out by retention.audit, never
  // changed: the trigger refuses an UPDATE from any connection. AUTOINCREMENT: an id is never given twice, even once
  // retention.audit has emptied the table, so newer entries always have larger ids (the pages' `before` cursor). New
  // tables: nothing is rewritten.
  `
  CREATE TABLE users (
    id TEXT PRIMARY KEY,
    email TEXT NOT NULL UNIQUE,
    role TEXT NOT NULL,
    password_hash TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE TABLE password_links (
    digest TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at TEXT
  );
  CREATE INDEX password_links_user ON password_links (user_id);
  CREATE TABLE tokens (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    digest TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    last_used_at TEXT
  );
  CREATE INDEX tokens_user ON tokens (user_id);
  CREATE TABLE sessions (
    digest TEXT PRIMARY KEY,
    user_id TEXT REFERENCES users (id) ON DELETE CASCADE,
    key_digest TEXT,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
  );
  CREATE INDEX sessions_user ON sessions (user_id);
  CREATE INDEX sessions_expires ON sessions (expires_at);
  CREATE TABLE audit_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    address TEXT,
    action TEXT NOT NULL,
    target TEXT,
    outcome TEXT NOT NULL,
    details TEXT
  );
  CREATE INDEX audit_log_at ON audit_log (at);
  CREATE INDEX audit_log_actor ON audit_log (actor);
  CREATE INDEX audit_log_action ON audit_log (action);
  CREATE INDEX audit_log_target ON audit_log (target);
  CREATE TRIGGER audit_log_unchanged BEFORE UPDATE ON audit_log
  BEGIN
    SELECT RAISE(ABORT, 'the audit log is appended to, never changed (docs/reference.md#audit-log)');
  END;
  `,
];
