import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe } from 'vitest';
import { openSqliteStore } from '../src/store/sqlite.js';
import { storeContract, type AttemptRow, type DeliveryRow, type ReceiptRow } from './store-contract.js';

describe('sqlite store', () => {
  const dir = mkdtempSync(join(tmpdir(), 'callhook-store-'));
  const path = join(dir, 'callhook.db');
  // A separate connection, as a second process on the same file would have; opened once the store made the file.
  let reader: Database.Database | undefined;
  const peekDb = () => (reader ??= new Database(path, { readonly: true }));

  afterAll(() => {
    reader?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  storeContract('sqlite', async () => openSqliteStore({ path }), {
    receipts: async (hook) =>
      peekDb()
        .prepare('SELECT outcome, status, call_id AS callId, raw_body AS rawBody FROM receipts WHERE hook = ? ORDER BY id')
        .all(hook) as ReceiptRow[],
    deliveries: async (callId) =>
      peekDb().prepare('SELECT sink, state, attempts FROM deliveries WHERE call_id = ? ORDER BY sink').all(callId) as DeliveryRow[],
    attempts: async (deliveryId) =>
      peekDb()
        .prepare('SELECT attempt, outcome, http_status AS httpStatus FROM attempts WHERE delivery_id = ? ORDER BY id')
        .all(deliveryId) as AttemptRow[],
  });
});
