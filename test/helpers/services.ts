import { connect } from 'node:net';
import pg from 'pg';
import { inject, TestRunner } from 'vitest';

/**
 * The machine's own services that some tests need, each found at its default address on 127.0.0.1 unless its
 * variable says otherwise. `npm test` probes every one once, before any test file runs (services-setup.ts), and
 * a file that needs one says so in one line:
 *
 *     const url = serviceUrl('postgres');  // undefined when the run found none: describe.skipIf(!url)(…)
 *
 * When a service is missing, its tests are skipped and the end of the run says which and why
 * (services-reporter.ts). A new service is one entry below: its name, its variable, its default and its probe.
 */

export interface ServiceDefinition {
  /** How the summary names it. */
  label: string;
  /** Overrides the default, as in CI or on a laptop whose service runs elsewhere. */
  variable: string;
  fallback: string;
  defaultPort: number;
  /** Resolves once the service has answered as itself; rejects with why not. */
  probe(url: string, timeoutMs: number): Promise<void>;
}

export const SERVICES = {
  postgres: {
    label: 'PostgreSQL',
    variable: 'TEST_DATABASE_URL',
    fallback: 'postgres://postgres@127.0.0.1:5432/test',
    defaultPort: 5432,
    // A real connection, so a missing database or a refused role is said as plainly as a server that is down.
    async probe(url, timeoutMs) {
      const client = new pg.Client({
        connectionString: url,
        connectionTimeoutMillis: timeoutMs,
        query_timeout: timeoutMs,
      });
      client.on('error', () => {}); // a server that goes away after the probe must not fail the run
      try {
        await client.connect();
        await client.query('SELECT 1');
      } finally {
        await client.end().catch(() => {});
      }
    },
  },
  redis: {
    label: 'Redis',
    variable: 'TEST_REDIS_URL',
    fallback: 'redis://127.0.0.1:6379',
    defaultPort: 6379,
    probe: (url, timeoutMs) =>
      exchange(url, 6379, timeoutMs, 'PING\r\n', (reply) =>
        reply.startsWith('+PONG') ? undefined : reply.split('\r\n')[0]!.replace(/^-/, ''),
      ),
  },
  nats: {
    label: 'NATS',
    variable: 'TEST_NATS_URL',
    fallback: 'nats://127.0.0.1:4222',
    defaultPort: 4222,
    // The server speaks first: INFO {…}.
    probe: (url, timeoutMs) =>
      exchange(url, 4222, timeoutMs, undefined, (reply) =>
        reply.startsWith('INFO ') ? undefined : 'it does not answer as NATS',
      ),
  },
  amqp: {
    label: 'RabbitMQ',
    variable: 'TEST_AMQP_URL',
    fallback: 'amqp://guest:guest@127.0.0.1:5672',
    defaultPort: 5672,
    // AMQP 0-9-1's protocol header; a broker answers with a method frame (type 1), Connection.Start.
    probe: (url, timeoutMs) =>
      exchange(url, 5672, timeoutMs, 'AMQP\x00\x00\x09\x01', (reply) =>
        reply.charCodeAt(0) === 1 ? undefined : 'it does not answer as AMQP 0-9-1',
      ),
  },
} satisfies Record<string, ServiceDefinition>;

export type ServiceName = keyof typeof SERVICES;

export type ServiceState =
  | { available: true; url: string }
  /** `why` names the service and its address, never the URL's credentials. */
  | { available: false; url: string; why: string; hint: string };

export type ServiceStates = Record<ServiceName, ServiceState>;

declare module 'vitest' {
  export interface ProvidedContext {
    services: ServiceStates;
  }
  export interface TaskMeta {
    /** Set on a test module by `serviceUrl`: the services it needs and could not have, with why. */
    missingServices?: Partial<Record<ServiceName, { why: string; hint: string }>>;
  }
}

export const PROBE_TIMEOUT_MS = 2000;

/** Every service, probed at once; the slowest takes at most the time-out. */
export async function probeServices(env: NodeJS.ProcessEnv, timeoutMs = PROBE_TIMEOUT_MS): Promise<ServiceStates> {
  const entries = await Promise.all(
    (Object.entries(SERVICES) as [ServiceName, ServiceDefinition][]).map(
      async ([name, service]) => [name, await probeService(service, env, timeoutMs)] as const,
    ),
  );
  return Object.fromEntries(entries) as ServiceStates;
}

export async function probeService(
  service: ServiceDefinition,
  env: NodeJS.ProcessEnv,
  timeoutMs = PROBE_TIMEOUT_MS,
): Promise<ServiceState> {
  const fromEnv = env[service.variable];
  const url = fromEnv || service.fallback;
  const hint = fromEnv ? `start it or correct ${service.variable}` : `start it or set ${service.variable}`;
  const where = `${service.label} at ${address(url, service.defaultPort)}${fromEnv ? ` (${service.variable})` : ''}`;
  try {
    await withDeadline(service.probe(url, timeoutMs), timeoutMs + 500);
    return { available: true, url };
  } catch (err) {
    return { available: false, url, why: `${where}: ${reason(err, timeoutMs)}`, hint };
  }
}

/**
 * In a test file: the URL of a service the file needs, or undefined when this run found none there. The module is
 * marked, so the end of the run can count its skipped tests under that service.
 */
export function serviceUrl(name: ServiceName): string | undefined {
  const states = inject('services') as ServiceStates | undefined;
  // Run with a config of its own, nothing was probed: the variable alone says where the service is.
  if (!states) return process.env[SERVICES[name].variable] || undefined;
  const state = states[name];
  if (state.available) return state.url;
  (TestRunner.getCurrentSuite().file.meta.missingServices ??= {})[name] = { why: state.why, hint: state.hint };
  return undefined;
}

/** host:port of a URL, which is all the summary shows of it. */
function address(url: string, defaultPort: number): string {
  try {
    const { hostname, port } = new URL(url);
    return `${hostname || 'localhost'}:${port || defaultPort}`;
  } catch {
    return 'an address that is not a URL';
  }
}

function reason(err: unknown, timeoutMs: number): string {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    case 'ETIMEDOUT':
    case 'PROBE_TIMEOUT':
      return `no answer within ${timeoutMs / 1000} s`;
  }
  const text = typeof message === 'string' && message ? message : String(err);
  // pg says its own time-out in words of its own.
  return /timeout|timed out/i.test(text) ? `no answer within ${timeoutMs / 1000} s` : text;
}

function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('no answer'), { code: 'PROBE_TIMEOUT' })), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

/**
 * For a service that speaks a line protocol, without its client library: connect, say `hello` (if anything),
 * and judge the first bytes that come back (`judge` returns why they are wrong, or undefined).
 */
function exchange(
  url: string,
  defaultPort: number,
  timeoutMs: number,
  hello: string | undefined,
  judge: (reply: string) => string | undefined,
): Promise<void> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname || '127.0.0.1', port: Number(port) || defaultPort, timeout: timeoutMs });
    const done = (err?: Error) => {
      socket.destroy();
      if (err) reject(err);
      else resolve();
    };
    socket.setEncoding('latin1');
    socket.once('connect', () => hello && socket.write(hello, 'latin1'));
    socket.once('data', (reply: string) => {
      const wrong = judge(reply);
      done(wrong ? new Error(wrong) : undefined);
    });
    socket.once('timeout', () => done(Object.assign(new Error('no answer'), { code: 'PROBE_TIMEOUT' })));
    socket.once('error', done);
    socket.once('end', () => done(new Error('it closed the connection without answering')));
  });
}
