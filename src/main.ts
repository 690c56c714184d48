import type { AddressInfo } from 'node:net';
import { createAdaptorServer, type ServerType } from '@hono/node-server';
import type { CountryCode } from 'libphonenumber-js';
import type { Logger } from 'pino';
import { adminOperations } from './admin/operations.js';
import { recordLostCalls } from './alerts/lost-calls.js';
import { type AlertEvents, createMonitor, NO_ALERTS } from './alerts/monitor.js';
import { createAlertSender } from './alerts/sender.js';
import { createApp } from './app.js';
import { type Config, loadConfig } from './config.js';
import { createDeliveryWorker } from './delivery/worker.js';
import { createAuthLimiter } from './http/auth-limit.js';
import { answerClientError } from './http/client-error.js';
import { loadInCallHandlers } from './in-call/handler.js';
import { buildIntake } from './intake/intake.js';
import { compileHooks } from './intake/pipeline.js';
import { writerThread } from './intake/thread.js';
import { type Generated, type ServeKeys, serveKeys } from './keys/serve.js';
import { createLogger } from './log.js';
import { createMetrics } from './metrics.js';
import { startRetention } from './privacy/retention.js';
import { keptParts } from './privacy/retention-config.js';
import { scheduleReconcile } from './reconcile/schedule.js';
import { secretValues } from './secret-values.js';
import { maskBytes, SecretSet, secretMasker } from './secrets.js';
import { exitOnShutdown, within } from './shutdown.js';
import { openSinks, resolveConfiguredSinks, type SinkSpec } from './sinks/registry.js';
import { openStore, sqlitePath } from './store/open.js';
import type { Store } from './store/store.js';

/**
 * The process, and only the process: load config → open store → create app → serve → close gracefully.
 */

export interface ServeOptions {
  env: Record<string, string | undefined>;
  configPath?: string;
  /** Where the start-up banner goes (the generated key is printed there once, never logged). */
  print?: (line: string) => void;
  /**
   * SQLite's file written by a thread of its own, with the intake beside it (intake/thread.ts); false writes it on
   * the event loop. Always on in `callhook serve`: the bench turns it off to show in each run what the thread buys.
   */
  writerThread?: boolean;
}

export interface Running {
  port: number;
  /** Drains (docs/reference.md#shutdown); rejects when that takes `shutdown_grace` plus CLOSING_MS. */
  close(): Promise<void>;
}

export async function serve({
  env,
  configPath,
  print = (line) => process.stderr.write(`${line}\n`),
  writerThread: threaded = true,
}: ServeOptions): Promise<Running> {
  const config = loadConfig(env, configPath);
  const specs = await resolveConfiguredSinks(config);
  // Shared with the logger, the admin replies and the delivery worker, and grown by the key rings: keys read again
  // while serving are masked as the first ones are (docs/reference.md#secrets).
  const secrets = new SecretSet(secretValues(config, specs));
  const log = createLogger({ level: config.logLevel, secrets });
  for (const warning of config.warnings) log.warn(warning);

  const inCallHandlers = await loadInCallHandlers(config.hooks.values());
  // Keys kept in the data dir come before the store: a first start on a full disk fails on them and leaves no database
  // file behind. Keys kept in PostgreSQL need the store (docs/reference.md#start-and-set-up: every replica shares
  // them).
  const keysInFiles = config.databaseUrl ? undefined : await serveKeys(config, { log, secrets });
  // SQLite's file is written by a thread of its own, where webhook requests are parsed, normalised and committed
  // too (intake/thread.ts); it starts with the first write.
  const writer = config.databaseUrl || !threaded ? undefined : writerThread(sqlitePath(config.dataDir), config, specs);
  const store = await openStore(config, writer?.write).catch((err: unknown) => {
    keysInFiles?.stop();
    throw err;
  });
  const keys: ServeKeys =
    keysInFiles ??
    (await serveKeys(config, { store: store.keptKeys, log, secrets }).catch(async (err: unknown) => {
      await store.close();
      throw err;
    }));
  const { resumed, besideAnother } = await store.resumeInFlight();
  if (resumed > 0) log.info({ deliveries: resumed }, 'resumed deliveries left in flight by the previous run');
  if (besideAnother)
    log.warn('another callhook serve is running on this database file; the deliveries it holds stay its own');
  const mask = secretMasker(secrets);
  // docs/reference.md#queues-and-databases: a sink whose service is down does not stop start-up; its deliveries retry,
  // and GET /admin/sinks says why from the moment serve listens.
  const hookSummaries = [...config.hooks.values()]
    .filter((hook) => hook.kind === 'end-of-call')
    .map((hook) => ({ name: hook.name, parameters: hook.parameters.map((p) => p.identifier), sinks: hook.sinks }));
  const context = {
    dataDir: config.dataDir,
    log,
    databaseUrl: config.databaseUrl,
    hooks: hookSummaries,
    secret: (value: string) => {
      secrets.add(value);
      return () => void secrets.delete(value);
    },
  };
  const sinks = await openSinks(specs, context, {
    onOpenFailed: (sink, err) => {
      const why = mask(err instanceof Error ? err.message : String(err));
      log.warn({ sink, error: why }, 'cannot open the sink; its deliveries wait and retry');
      return store
        .recordSinkError(sink, why)
        .catch((e: unknown) => log.error({ err: e, sink }, 'cannot record why a sink did not open'));
    },
  });
  const metrics = createMetrics(
    store,
    specs.map((s) => s.name),
    { pausedByDefault: specs.filter((s) => s.policy.paused).map((s) => s.name) },
  );
  const alerts = startAlerts(config, { store, log, mask, specs });
  // docs/reference.md#retention: in the background, from a few seconds after start-up, every `retention.every`.
  const retention = startRetention(config.retention, { store, log });
  const worker = createDeliveryWorker({
    store,
    sinks: new Map(specs.map((s) => [s.name, { sink: sinks.get(s.name)!, policy: s.policy }])),
    log,
    onAttempt: (event) => {
      metrics.observeAttempt(event);
      if (event.outcome === 'dead' && event.recorded) alerts.events.deliveryDead(event.sink);
    },
    mask,
  });
  worker.start();

  let accepting = true;
  // Built once and handed down: the routes, the dashboard and reconciliation build none of their own.
  const notify = () => worker.notify();
  const hooks = compileHooks(config, specs);
  const intake = buildIntake({ store, hooks, onThread: writer?.ingest, onCommitted: notify, inCallHandlers });
  const admin = adminOperations({
    store,
    intake,
    sinks: specs.map((s) => ({
      name: s.name,
      type: s.type,
      pausedByDefault: s.policy.paused,
      testTraffic: s.testTraffic,
    })),
    notify,
    bodyLimitBytes: config.bodyLimit,
    phoneRegion: config.phoneRegion,
    timezone: config.timezone,
    openSinks: sinks,
    log,
    maskBody: (bytes) => maskBytes(bytes, secrets),
    // docs/reference.md#operators: a configured admin token stands in for the last admin user; a generated one does not.
    adminTokenConfigured: config.adminToken !== undefined,
    onJobEnd: (job) =>
      log[job.state === 'done' ? 'info' : 'warn']({ job }, `admin job ${job.kind} ${job.state}: ${job.id}`),
  });
  const app = createApp({
    log,
    metrics,
    store,
    http: {
      bodyLimitBytes: config.bodyLimit,
      limiter: createAuthLimiter(config.authLimit),
      trustProxy: config.trustProxy,
      secureCookies: config.secureCookies,
      publicUrl: config.publicUrl,
      metricsToken: config.metricsToken,
      timezone: config.timezone,
      storeDeadlineMs: config.storeDeadlineMs,
    },
    keys: { adminToken: keys.admin, globalKeys: keys.webhook, secrets },
    intake,
    admin,
    health: { workerRunning: () => worker.running, accepting: () => accepting },
    alerts: alerts.events,
    retention: config.retention,
  });

  const reconciler = config.reconcile?.intervalMs
    ? scheduleReconcile({
        config: config.reconcile,
        log,
        secrets,
        store,
        hook: hooks.get(config.reconcile.hook)!,
        ingest: intake.ingestFields,
        region: config.phoneRegion as CountryCode,
        onRecovered: alerts.lostCalls,
      })
    : undefined;

  // Everything but the listener, in the order it must stop: what feeds deliveries, the deliveries, then the store.
  // Deliveries in flight get until `deadline`, then go back to pending (docs/reference.md#shutdown).
  const stopBehind = async (deadline = Date.now() + config.shutdownGraceMs) => {
    keys.stop();
    // A pass stops between two chunks; what it removed stays removed, and the next start goes on from its marks.
    await retention.stop();
    await reconciler?.stop();
    // A period's redelivery stops between two chunks; what it queued stays queued (docs/reference.md#a-period-to-one-sink).
    await admin.redeliveries.stop();
    await worker.stop(Math.max(0, deadline - Date.now()));
    await alerts.stop();
    await Promise.allSettled([...sinks.values()].map((s) => s.close?.()));
    await writer?.close();
    await store.close();
  };

  const server = await new Promise<ServerType>((resolve, reject) => {
    const s = createAdaptorServer({
      fetch: app.fetch,
      // A client that trickles its headers or body cannot hold a connection for ever.
      // Node checks those limits every connectionsCheckingInterval (30 s by default): check each second instead.
      serverOptions: {
        headersTimeout: config.headersTimeoutMs,
        requestTimeout: config.requestTimeoutMs,
        connectionsCheckingInterval: 1_000,
      },
    });
    s.once('error', reject);
    // The sender opens a connection per call and a campaign's end sends thousands at once: beyond Node's default
    // queue of 511 connections waiting to be accepted, the kernel drops the rest, and a sender whose connection is
    // dropped retries it after 1, 3, 7 s, past its 10 s (bench/results.md, the storm). The kernel still caps the
    // queue at net.core.somaxconn (4096 on current Linux).
    s.listen(
      { port: config.port, host: config.host, backlog: LISTEN_BACKLOG },
      () => (s.off('error', reject), resolve(s)),
    );
  }).catch(async (err: unknown) => {
    await stopBehind();
    throw listenFailure(err, config.host, config.port);
  });
  server.on('clientError', answerClientError);
  const port = (server.address() as AddressInfo).port;
  // The log is written once a turn (log.ts): what start-up logged comes before the banner, not after it.
  log.flush();
  banner(print, config, port, keys.generated);
  log.info(
    { port, host: config.host, store: store.kind, hooks: [...hooks.keys()], sinks: [...sinks.keys()] },
    'callhook listening',
  );

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= within(
      (async () => {
        // One grace, from here, for what is in flight: the requests, then the deliveries.
        const deadline = Date.now() + config.shutdownGraceMs;
        // Stop intake first: in-flight requests are answered, new connections refused, readiness turns 503.
        accepting = false;
        await closeListener(server, deadline);
        await stopBehind(deadline);
        log.info('callhook stopped');
        log.flush();
      })(),
      config.shutdownGraceMs + CLOSING_MS,
      'the drain',
    ));
  return { port, close };
}

/**
 * After the grace, closing the sinks, the writer thread and the store takes milliseconds; this bounds a sink whose
 * close waits on a service gone away. Past it the drain is cut short (docs/reference.md#shutdown).
 */
const CLOSING_MS = 5_000;

/** A signal during start-up gives the start this long to finish; after it the drain is cut short (exit 1). */
const STARTING_MS = 30_000;

/**
 * Closes the listener. Requests in flight are answered until `deadline`; a connection still open then is cut, so
 * the grace bounds the whole drain (with the default 10 s, the sender has given up on that reply by then: it waits
 * 10 s, docs/calling-service.md).
 */
function closeListener(server: ServerType, deadline: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const cut = setTimeout(
      () => 'closeAllConnections' in server && server.closeAllConnections(),
      Math.max(0, deadline - Date.now()),
    );
    server.close(() => {
      clearTimeout(cut);
      resolve();
    });
    if ('closeIdleConnections' in server) server.closeIdleConnections();
  });
}

/** Connections the kernel may hold for serve before it accepts them: a storm of calls, each on its own. */
const LISTEN_BACKLOG = 4096;

/** Why the listener could not start, in one line that says what to change. */
function listenFailure(err: unknown, host: string, port: number): Error {
  const code = (err as { code?: unknown }).code;
  const where = `${host}:${port}`;
  if (code === 'EADDRINUSE')
    return new Error(
      `cannot listen on ${where}: the port is in use (by another callhook serve?); set PORT to another one`,
      { cause: err },
    );
  if (code === 'EACCES')
    return new Error(
      `cannot listen on ${where}: not allowed (a port below 1024 needs privileges); set PORT to another one`,
      { cause: err },
    );
  if (code === 'EADDRNOTAVAIL')
    return new Error(`cannot listen on ${where}: no interface of this machine has that address; check HOST`, {
      cause: err,
    });
  return new Error(`cannot listen on ${where}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
}

function banner(print: (line: string) => void, config: Config, port: number, generated: ServeKeys['generated']): void {
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  print(`callhook is listening on http://${host}:${port}`);
  for (const name of config.hooks.keys()) print(`  webhook URL: http://${host}:${port}/webhooks/${name}`);
  // docs/reference.md#dashboard: the operator's way in, signed in with the admin token.
  print(`  dashboard: http://${host}:${port}/ui (sign in with the admin token)`);
  // docs/reference.md#retention: what is kept how long, said where the operator looks first.
  print(`  retention: ${keptParts(config.retention).join('; ')}`);
  // With DATABASE_URL only the replica whose key was kept prints it: the others found it kept (keys/kept.ts).
  if (generated.apiKey) shownOnce(print, 'webhook key', generated.apiKey);
  // Generated and kept like the webhook key (docs/reference.md#start-and-set-up), so shown once like it: /admin needs
  // it.
  if (generated.adminToken) shownOnce(print, 'admin token', generated.adminToken);
}

function shownOnce(print: (line: string) => void, what: string, { key, where }: Generated): void {
  print(`  generated ${what} (shown once, kept in ${where}):`);
  print(`    Authorization: Bearer ${key}`);
}

/** `callhook serve`: runs until SIGTERM or SIGINT, then drains and exits 0 (docs/reference.md#shutdown). */
export async function runServer(options: ServeOptions): Promise<void> {
  const starting = serve(options);
  // Installed before start-up ends: a signal in between (an orchestrator that gives up on the new process, a
  // deploy rolled back) would otherwise take Node's default and kill the process with requests in flight.
  const shutdown = exitOnShutdown({ drain: async () => (await within(starting, STARTING_MS, 'start-up')).close() });
  // A start-up that fails is reported, and exits 2: this handler, on `starting` before any drain's, uninstalls that
  // drain first, so it exits nothing.
  await starting.catch((err: unknown) => {
    shutdown.uninstall();
    throw err;
  });
}

interface RunningAlerts {
  events: AlertEvents;
  /** A reconcile run stored calls whose webhook never arrived: the `lost_calls` notice. */
  lostCalls: (stored: number) => void;
  stop(): Promise<void>;
}

/**
 * The alert rules and the sender of their messages (docs/reference.md#alerts), once a channel is configured; without
 * one no rule is on and the events cost nothing.
 */
function startAlerts(
  config: Config,
  {
    store,
    log,
    mask,
    specs,
  }: { store: Store; log: Logger; mask: (text: string) => string; specs: readonly SinkSpec[] },
): RunningAlerts {
  const { channels, rules, every } = config.alerts;
  if (channels.length === 0) return { events: NO_ALERTS, lostCalls: () => undefined, stop: async () => undefined };
  const names = channels.map((c) => c.name);
  const sender = createAlertSender({ store, channels, log, publicUrl: config.publicUrl, mask });
  const monitor = createMonitor({
    rules,
    channels: names,
    store,
    sender,
    log,
    hooks: [...config.hooks.values()].filter((hook) => hook.kind === 'end-of-call').map((hook) => hook.name),
    sinks: specs.map((s) => ({ name: s.name, pausedByDefault: s.policy.paused })),
    timezone: config.timezone,
    everyMs: every,
  });
  sender.start();
  monitor.start();
  return {
    events: monitor,
    lostCalls: (stored) => {
      if (rules.lost_calls === false || stored === 0) return;
      recordLostCalls(store, names, stored).then(
        () => sender.notify(),
        (err: unknown) => log.warn({ err }, 'alerts: cannot keep the lost_calls notice'),
      );
    },
    async stop() {
      await monitor.stop();
      await sender.stop();
    },
  };
}
