import pino from 'pino';
import { adminOperations } from '../../src/admin/operations.js';
import { type AppDeps, createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { buildIntake } from '../../src/intake/intake.js';
import { compileHooks, type Hook } from '../../src/intake/pipeline.js';
import type { Store } from '../../src/store/store.js';
import { ADMIN, KEY } from './server.js';

/**
 * The app in this process on a store the test holds, for tests that break the store or call it very often. Its
 * intake and admin operations are built as serve builds them (main.ts), from `hooks` when given.
 */
export function appOn(
  store: Store,
  { hooks, ...overrides }: Partial<AppDeps> & { hooks?: ReadonlyMap<string, Hook> } = {},
) {
  const config = loadConfig({ CALLHOOK_API_KEYS: KEY });
  const intake = buildIntake({ store, hooks: hooks ?? compileHooks(config) });
  return createApp({
    intake,
    admin: adminOperations({ store, intake, sinks: [], notify: () => {}, bodyLimitBytes: config.bodyLimit }),
    store,
    log: pino({ level: 'silent' }),
    bodyLimitBytes: config.bodyLimit,
    adminToken: ADMIN,
    secrets: [],
    workerRunning: () => true,
    accepting: () => true,
    ...overrides,
  });
}
