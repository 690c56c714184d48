import type { Logger } from 'pino';
import pino from 'pino';
import { adminOperations } from '../../src/admin/operations.js';
import type { ConfiguredSink } from '../../src/admin/sinks.js';
import { createApp, type HttpOptions } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { buildIntake } from '../../src/intake/intake.js';
import { compileHooks, type Hook } from '../../src/intake/pipeline.js';
import type { Store } from '../../src/store/store.js';
import { ADMIN, KEY } from './server.js';

export interface AppOptions {
  /** The hooks, compiled; the default config's by default. */
  hooks?: ReadonlyMap<string, Hook>;
  log?: Logger;
  /** Over the default config's. */
  http?: Partial<HttpOptions>;
  /** The sinks the operations know of (none are opened: nothing is delivered). */
  sinks?: ConfiguredSink[];
}

/**
 * The app in this process on a store the test holds, for tests that break the store or call it very often. Its
 * intake and admin operations are built as serve builds them (main.ts).
 */
export function appOn(
  store: Store,
  { hooks, log = pino({ level: 'silent' }), http = {}, sinks = [] }: AppOptions = {},
) {
  const config = loadConfig({ CALLHOOK_API_KEYS: KEY });
  const bodyLimitBytes = http.bodyLimitBytes ?? config.bodyLimit;
  const intake = buildIntake({ store, hooks: hooks ?? compileHooks(config) });
  return createApp({
    log,
    store,
    http: { ...http, bodyLimitBytes },
    keys: { adminToken: ADMIN, secrets: [] },
    intake,
    admin: adminOperations({ store, intake, sinks, notify: () => {}, bodyLimitBytes, adminTokenConfigured: true }),
    health: { workerRunning: () => true, accepting: () => true },
  });
}
