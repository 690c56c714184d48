import pino from 'pino';
import { type AppDeps, createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { compileHooks } from '../../src/intake/pipeline.js';
import type { Store } from '../../src/store/store.js';
import { ADMIN, KEY } from './server.js';

/** The app in this process on a store the test holds, for tests that break the store or call it very often. */
export function appOn(store: Store, overrides: Partial<AppDeps> = {}) {
  const config = loadConfig({ CALLHOOK_API_KEYS: KEY });
  return createApp({
    hooks: compileHooks(config),
    store,
    log: pino({ level: 'silent' }),
    bodyLimitBytes: config.bodyLimit,
    adminToken: ADMIN,
    secrets: [],
    sinkNames: [],
    notify: () => {},
    workerRunning: () => true,
    accepting: () => true,
    ...overrides,
  });
}
