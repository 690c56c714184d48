import { serve } from '@hono/node-server';
import { adminOperations } from '../../src/admin/operations.js';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createAuthLimiter } from '../../src/http/auth-limit.js';
import { buildIntake } from '../../src/intake/intake.js';
import { compileHooks } from '../../src/intake/pipeline.js';
import type { RequestOutcome } from '../../src/intake/request.js';
import { createLogger } from '../../src/log.js';
import { createMetrics } from '../../src/metrics.js';
import { secretValues } from '../../src/secret-values.js';
import type { Store } from '../../src/store/store.js';

/**
 * callhook's own route with nothing behind it: the same app (request id, bearer check, body read, request log line,
 * metrics, reply) whose store answers every request as accepted at once, with no parsing, normalising or commit.
 * Whatever durable intake costs comes on top of this, so its ratio to the empty route is the most intake could reach
 * on the machine the bench runs on.
 */

const config = loadConfig(process.env);
const apiKey = process.env.CALLHOOK_API_KEYS;
if (!apiKey) throw new Error('CALLHOOK_API_KEYS must hold the key the load sends');
const hooks = compileHooks({
  ...config,
  hooks: new Map([...config.hooks].map(([name, hook]) => [name, { ...hook, keys: [apiKey] }])),
});

let calls = 0;
// The reply callhook sends for a new call, of the same size.
const accepted = (): Promise<RequestOutcome> =>
  Promise.resolve({
    reply: {
      status: 'accepted',
      id: `01JD${String(++calls).padStart(22, '0')}`,
      dedup_key: `call_id:bench-${calls}`,
      problems: [],
    },
  });
// Only what the webhook route calls on a request that is accepted; anything else would throw and show as a 500.
const store = { kind: 'sqlite' } as unknown as Store;

const secrets = secretValues(config, []);
// Every request is taken by the stand-in for the writer's thread, as serve hands them to the real one.
const intake = buildIntake({ store, hooks, onThread: accepted });
const log = createLogger({ level: 'info', secrets });
const app = createApp({
  log,
  metrics: createMetrics(store, []),
  store,
  http: { bodyLimitBytes: config.bodyLimit, limiter: createAuthLimiter(config.authLimit) },
  keys: { adminToken: apiKey, secrets },
  intake,
  admin: adminOperations({ store, intake, sinks: [], notify: () => {}, bodyLimitBytes: config.bodyLimit }),
  health: { workerRunning: () => true, accepting: () => true },
});

const server = serve(
  { fetch: app.fetch, port: Number(process.env.PORT ?? 0), hostname: process.env.HOST ?? '127.0.0.1' },
  (info) => {
    process.stderr.write(`callhook-route listening on http://${info.address}:${info.port}\n`);
  },
);

process.on('SIGTERM', () => server.close(() => process.exit(0)));
