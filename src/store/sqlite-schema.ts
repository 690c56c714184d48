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
  // The age of the oldest pending delivery (contract section 6, /metrics) needs each delivery's creation time.
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
  // expressions are those of sqlite-admin.ts's dataField, character for character, or the planner ignores them.
  `
  CREATE INDEX calls_phone ON calls (CAST(json_extract(record, '$.data.phone_number') AS TEXT), id);
  CREATE INDEX calls_recording ON calls (CAST(json_extract(record, '$.data.recording_url') AS TEXT), id);
  `,
  // Contract section 4 and 3. A call with nothing in it has no dedup key (NULL, which UNIQUE never matches), and a
  // repeat is compared with the content hash of the call as first received. SQLite cannot drop a NOT NULL, so the
  // table is rebuilt (https://sqlite.org/lang_altertable.html#otheralter; migrate() turns foreign keys off around
  // it, or the DROP would cascade to the deliveries). Existing calls keep their keys; their hash is computed from
  // their record, which no edit has changed yet (callhook_content_hash, registered by migrate()), and their record
  // gains `revision: 1` (json_set keeps the rest of the text as it was written). A refused request's receipt keeps its query
  // string, and says as which call it was ingested (section 6).
  `
  CREATE TABLE calls_v4 (
    id TEXT PRIMARY KEY,
    hook TEXT NOT NULL,
    dedup_key TEXT,
    content_hash TEXT NOT NULL,
    status TEXT NOT NULL,
    source TEXT NOT NULL,
    received_at TEXT NOT NULL,
    record TEXT NOT NULL,
    raw TEXT NOT NULL,
    duplicates INTEGER NOT NULL DEFAULT 0,
    UNIQUE (hook, dedup_key)
  );
  INSERT INTO calls_v4 (id, hook, dedup_key, content_hash, status, source, received_at, record, raw, duplicates)
    SELECT id, hook, dedup_key, callhook_content_hash(record), status, source, received_at,
      CASE WHEN json_type(record, '$.revision') IS NULL THEN json_set(record, '$.revision', 1) ELSE record END,
      raw, duplicates
    FROM calls;
  DROP TABLE calls;
  ALTER TABLE calls_v4 RENAME TO calls;
  CREATE INDEX calls_status ON calls (status, id);
  CREATE INDEX calls_received ON calls (received_at);
  CREATE INDEX calls_phone ON calls (CAST(json_extract(record, '$.data.phone_number') AS TEXT), id);
  CREATE INDEX calls_recording ON calls (CAST(json_extract(record, '$.data.recording_url') AS TEXT), id);
  ALTER TABLE receipts ADD COLUMN query TEXT;
  ALTER TABLE receipts ADD COLUMN ingested_as TEXT;
  CREATE INDEX receipts_refused ON receipts (id) WHERE outcome = 'rejected';
  `,
];
