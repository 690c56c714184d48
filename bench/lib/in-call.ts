import { join } from 'node:path';
import { newId } from '../../src/ids.js';
import { compileParameters, dedupKey, normalize, RECOMMENDED_PARAMETERS } from '../../src/normalize/index.js';
import type { CallRecord } from '../../src/record.js';
import { SQLITE_FILE } from '../../src/store/open.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import type { BodyFactory } from './bodies.js';
import { callFields } from './bodies.js';

/**
 * An in-call hook's store: a history of calls from many callers, each caller several times, written through the
 * store itself. The lookups then ask for those callers, in the local format callers give their numbers in.
 */

const BATCH = 1_000;

/** `+9198…`: a valid Indian mobile number for each caller index. */
const callerNumber = (caller: number) => `98${String(caller).padStart(8, '0')}`;

export async function createHistory(dataDir: string, calls: number, callers: number): Promise<void> {
  const store = openSqliteStore({ path: join(dataDir, SQLITE_FILE) });
  const parameters = compileParameters(RECOMMENDED_PARAMETERS, { region: 'IN' });
  try {
    for (let start = 0; start < calls; start += BATCH) {
      const commits: Promise<unknown>[] = [];
      for (let i = start; i < Math.min(calls, start + BATCH); i++) {
        const fields = { ...callFields(`history-${i}`), phone_number: callerNumber(i % callers), order_id: `ORD-${i}` };
        const { data, extra, problems } = normalize(fields, parameters);
        const now = new Date();
        const record: CallRecord = {
          id: newId(now.getTime()), hook: 'end-of-call', dedup_key: dedupKey(['call_id', 'order_id'], data, extra),
          received_at: now.toISOString(), source: 'webhook', data, extra, problems,
        };
        const body = JSON.stringify(fields);
        commits.push(store.commitCall({
          record, status: 'accepted', sinks: [],
          raw: { method: 'POST', content_type: 'application/json', query: {}, body },
          receipt: { hook: 'end-of-call', receivedAt: record.received_at, method: 'POST', contentType: 'application/json', size: body.length },
        }));
      }
      await Promise.all(commits);
    }
  } finally {
    await store.close();
  }
}

/** Lookup bodies cycling through the callers, the number written as a caller says it (`098…`). */
export function lookupBodies(callers: number): BodyFactory {
  let n = 0;
  const next = () => JSON.stringify({ phone_number: `0${callerNumber(n++ % callers)}` });
  return { contentType: 'application/json', bytes: Buffer.byteLength(next()), next };
}
