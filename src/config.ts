import { readFileSync } from 'node:fs';
import { dirname, extname, resolve } from 'node:path';
import { isSupportedCountry } from 'libphonenumber-js';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { type AlertsConfig, alertsSchema, DEFAULT_ALERTS, publicUrlSchema } from './alerts/config.js';
import { durationSchema } from './duration.js';
import { STORE_DEADLINE_MS } from './http/deadline.js';
import { DATE_ORDERS, type DateOrder } from './normalize/calendar-date.js';
import type { DedupEntry } from './normalize/dedup-key.js';
import { DEFAULT_PHONE_REGION } from './normalize/formats.js';
import { type Parameter, parametersSchema, RECOMMENDED_PARAMETERS } from './normalize/parameters.js';
import { platformOf } from './platforms/index.js';
import { PLATFORM_NAMES, type PlatformName } from './platforms/platform.js';
import {
  DEFAULT_RETENTION,
  type RetentionConfig,
  retentionSchema,
  retentionWarnings,
} from './privacy/retention-config.js';

/**
 * Settings come from environment variables, then from an optional YAML or JSON file
 * (docs/reference.md#start-and-set-up). This module is the only reader of process.env: everything else receives a
 * Config.
 */

const HOOK_NAME = /^[a-z0-9][a-z0-9_-]*$/;
/** RFC 6750 section 2.1: a bearer token is token68, so a key outside it could never be presented. */
const TOKEN68 = /^[A-Za-z0-9._~+/-]+=*$/;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const keySchema = z.string().regex(TOKEN68, 'a key must be a bearer token: letters, digits and -._~+/ (RFC 6750)');
/**
 * Nothing sets a length for a key, so a shorter one is accepted; but it can be guessed, and serve and
 * `config check` say so. Generated keys are far longer (keys.ts).
 */
const STRONG_KEY_LENGTH = 16;

/** Defaults are applied in loadConfig, so an in-call hook can refuse what it was given, not what it defaulted to. */
const hookSchema = z.strictObject({
  /**
   * `in-call`: the AI asks it during a conversation (spec 6.1) and gets an answer from the store; nothing is stored.
   */
  kind: z.enum(['end-of-call', 'in-call']).default('end-of-call'),
  description: z.string().default(''),
  parameters: parametersSchema.optional(),
  keys: z.array(keySchema).min(1).optional(),
  /** docs/reference.md#deduplication: each entry a field, or a list of fields that must all be present. */
  dedup: z
    .array(z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]))
    .min(1)
    .optional(),
  /** A repeat of a stored key whose content differs: kept as a call of its own, or answered as a duplicate. */
  on_conflict: z.enum(['keep', 'duplicate']).optional(),
  on_problem: z.enum(['deliver', 'hold']).optional(),
  sinks: z.array(z.string().min(1)).optional(),
  allow_files: z.boolean().optional(),
  /** In-call only: a module whose default export answers instead of the built-in caller history. */
  handler: z.string().min(1).optional(),
  /** In-call only: the AI is waiting on the line, well inside the sender's 10 s. */
  handler_timeout: durationSchema
    .refine((ms) => ms >= 1 && ms <= 8_000, 'handler_timeout must be from 1ms to 8s')
    .optional(),
  /** docs/reference.md#other-voice-platforms: the platform that sends this hook its calls, and its shared secret. */
  platform: z.enum(PLATFORM_NAMES).optional(),
  secret: z.string().min(1).optional(),
  /** Fields of a platform's payload not to keep (a transcript). */
  drop: z.array(z.string().min(1)).optional(),
  // A platform's own options (Vapi's authentication), checked by the platform named (platforms/).
  auth: z.unknown().optional(),
  header: z.unknown().optional(),
  timestamp_header: z.unknown().optional(),
  algorithm: z.unknown().optional(),
});

/** The platform options a hook may carry, read by the platform it names. */
const PLATFORM_OPTIONS = ['auth', 'header', 'timestamp_header', 'algorithm'] as const;

/** What an in-call hook looks up by when it declares no parameters. */
const IN_CALL_PARAMETERS: Parameter[] = [
  {
    identifier: 'phone_number',
    type: 'string',
    required: true,
    description: "Caller's number in E.164 format",
    format: 'e164',
  },
];
/**
 * docs/reference.md#deduplication: the sender sends no call id of its own, and a recording is made once per call, so
 * the recording's URL identifies a call where an order id (several calls about one order) would merge two.
 */
export const DEFAULT_DEDUP: readonly DedupEntry[] = ['call_id', 'recording_url'];

const END_OF_CALL_ONLY = ['dedup', 'on_conflict', 'on_problem', 'sinks', 'allow_files'] as const;
const IN_CALL_ONLY = ['handler', 'handler_timeout'] as const;

/** A sink's own options are checked by its factory (sinks/registry.ts); here only what every sink has. */
const sinkSchema = z.looseObject({
  name: z.string().regex(HOOK_NAME, 'a sink name is lowercase letters, digits, - and _'),
  type: z.string().min(1),
});

const fileSchema = z.strictObject({
  port: z.number().int().min(0).max(65535).optional(),
  host: z.string().min(1).optional(),
  data_dir: z.string().min(1).optional(),
  log_level: z.enum(LOG_LEVELS).optional(),
  api_keys: z.array(keySchema).optional(),
  admin_token: keySchema.optional(),
  /** docs/reference.md#metrics: when set, `/metrics` asks for it as a bearer token. */
  metrics_token: keySchema.optional(),
  /**
   * docs/reference.md#exposure: behind a reverse proxy, the client's address is the last `X-Forwarded-For` hop (the one
   * the proxy added), for the auth limiter and the request log. Off by default: a client could write that header
   * itself.
   */
  trust_proxy: z.boolean().default(false),
  database_url: z.string().startsWith('postgres').optional(),
  /**
   * docs/reference.md#time-zone: the zone the dashboard shows times in, and in which a date given to a filter is a day.
   */
  timezone: z.string().refine(isTimeZone, 'timezone must be an IANA time zone name, such as Asia/Kolkata').optional(),
  /**
   * docs/reference.md#time-zone: the dashboard's session cookie is `Secure` even when the request did not say HTTPS.
   */
  secure_cookies: z.boolean().default(false),
  phone_region: z
    .string()
    .refine(
      (r) => /^[A-Z]{2}$/.test(r) && isSupportedCountry(r),
      'a two-letter ISO 3166 region that has phone numbers, such as IN',
    )
    .default(DEFAULT_PHONE_REGION),
  /**
   * docs/reference.md#normalising: numeric dates such as 05/03/2026 are read day first, as in India, or month first.
   */
  date_order: z.enum(DATE_ORDERS).default('DMY'),
  body_limit: z
    .number()
    .int()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(1024 * 1024),
  /** A client slower than these is cut off (issue: slow clients cannot hold a connection for ever). */
  headers_timeout: durationSchema.default(10_000),
  request_timeout: durationSchema.default(30_000),
  /** After SIGTERM, how long requests and deliveries in flight get to finish (docs/reference.md#shutdown). */
  shutdown_grace: durationSchema.default(10_000),
  /**
   * How long a webhook's commit may take before its reply is a 503 (docs/reference.md#replies, http/deadline.ts). The
   * sender waits 10 s (spec section 6.1): a reply later than that is lost anyway, and under 1 s a brief stall of
   * the store refuses calls it would have taken.
   */
  store_deadline: durationSchema
    .refine((ms) => ms >= 1_000 && ms < 10_000, 'store_deadline must be at least 1s and less than 10s')
    .default(STORE_DEADLINE_MS),
  /** After `max` failed authentications from one address within `window`, it gets 429 until the window ends. */
  auth_limit: z
    .strictObject({ max: z.number().int().min(1).default(20), window: durationSchema.default(60_000) })
    .default({ max: 20, window: 60_000 }),
  hooks: z
    .record(z.string().regex(HOOK_NAME, 'a hook name is lowercase letters, digits, - and _'), hookSchema)
    .optional(),
  sinks: z.array(sinkSchema).optional(),
  /** Recovers calls whose webhook never arrived (`callhook reconcile`), and on a schedule inside serve. */
  reconcile: z
    .strictObject({
      api_url: z.url({
        protocol: /^https?$/,
        error: 'api_url must be the http(s) base URL of the calling service, ending in /api/v1',
      }),
      api_key: z.string().min(1),
      /** Absent: only `callhook reconcile` runs it. */
      interval: durationSchema.refine((ms) => ms >= 60_000, 'interval must be at least 1m').optional(),
      hook: z.string().default('end-of-call'),
      /** How far back each scheduled run looks (the campaigns started since then). */
      lookback: durationSchema.default(7 * 86_400_000),
    })
    .optional(),
  /** The dashboard's address as seen from outside, for the links in alert messages (docs/reference.md#alerts). */
  public_url: publicUrlSchema.optional(),
  /** Channels and rules (docs/reference.md#alerts); its own module, as it is a part of its own. */
  alerts: alertsSchema.optional(),
  /** How long personal data is kept (docs/reference.md#retention); its own module, as alerts'. */
  retention: retentionSchema.optional(),
});

export interface HookConfig {
  name: string;
  kind: 'end-of-call' | 'in-call';
  description: string;
  parameters: Parameter[];
  /** Keys accepted on this hook; the global keys when the hook declares none. */
  keys: string[];
  dedup: readonly DedupEntry[];
  on_conflict: 'keep' | 'duplicate';
  on_problem: 'deliver' | 'hold';
  sinks: string[];
  allow_files: boolean;
  /** In-call: the absolute path of the handler module, if any. */
  handler: string | undefined;
  handlerTimeoutMs: number;
  /** A hook a voice platform sends to (docs/reference.md#other-voice-platforms); absent for the calling service's. */
  platform?: PlatformHook;
}

export interface PlatformHook {
  name: PlatformName;
  /** The platform's shared secret (Retell: its API key): it signs or carries every request. */
  secret: string;
  /** The platform's own options, checked (Vapi's `auth` and its header names). */
  options: unknown;
  /** Fields not kept, wherever they are in the payload. */
  drop: readonly string[];
  /** The largest body the platform sends, or the config's `body_limit` when that is larger. */
  bodyLimitBytes: number;
}

export interface ReconcileConfig {
  apiUrl: string;
  apiKey: string;
  intervalMs: number | undefined;
  hook: string;
  lookbackMs: number;
}

export interface SinkConfig {
  name: string;
  type: string;
  [option: string]: unknown;
}

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  logLevel: (typeof LOG_LEVELS)[number];
  /** Global webhook keys from CALLHOOK_API_KEYS or the file; empty means "generate one". */
  apiKeys: string[];
  adminToken: string | undefined;
  /**
   * CALLHOOK_TOKEN: a user's personal token, which the CLI's admin client sends before the admin token
   * (docs/reference.md#operators). serve does not read it.
   */
  personalToken: string | undefined;
  /** Bearer token `/metrics` asks for; open when unset. */
  metricsToken: string | undefined;
  trustProxy: boolean;
  /** An IANA zone name: the config's `timezone`, else the server's own. */
  timezone: string;
  secureCookies: boolean;
  databaseUrl: string | undefined;
  phoneRegion: string;
  dateOrder: DateOrder;
  bodyLimit: number;
  authLimit: { max: number; windowMs: number };
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  shutdownGraceMs: number;
  /** A webhook's reply is a 503 when its commit has not finished by then (http/deadline.ts). */
  storeDeadlineMs: number;
  hooks: Map<string, HookConfig>;
  sinks: SinkConfig[];
  reconcile: ReconcileConfig | undefined;
  /** Without a trailing slash. */
  publicUrl: string | undefined;
  alerts: AlertsConfig;
  /** What `serve` removes, and when (docs/reference.md#retention); nothing by default. */
  retention: RetentionConfig;
  /** Every value `${VAR}` filled in, and where: some are secrets by where they land (secret-values.ts). */
  filled: FilledValue[];
  /** What is allowed but unwise (a short key), for serve to log and `config check` to print; never a secret. */
  warnings: string[];
  configPath: string | undefined;
}

export interface FilledValue {
  /** Where in the config file, `['sinks', 0, 'headers', 'X-Api-Key']`. */
  path: (string | number)[];
  variable: string;
  value: string;
}

export class ConfigError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env, path = env.CALLHOOK_CONFIG): Config {
  const filled: FilledValue[] = [];
  const file = path ? readConfigFile(path, env, filled) : {};
  const parsed = fileSchema.safeParse(file);
  if (!parsed.success) throw new ConfigError(describeIssues(parsed.error, path));
  const f = parsed.data;
  if (f.headers_timeout > f.request_timeout)
    throw new ConfigError('headers_timeout: must not be longer than request_timeout');

  const dataDir = resolve(env.CALLHOOK_DATA_DIR || f.data_dir || './data');
  const apiKeys = env.CALLHOOK_API_KEYS !== undefined ? parseKeyList(env.CALLHOOK_API_KEYS) : (f.api_keys ?? []);
  const adminToken = env.CALLHOOK_ADMIN_TOKEN || f.admin_token;
  if (adminToken !== undefined) checkEnvKey('CALLHOOK_ADMIN_TOKEN', adminToken);
  const metricsToken = env.CALLHOOK_METRICS_TOKEN || f.metrics_token;
  if (metricsToken !== undefined) checkEnvKey('CALLHOOK_METRICS_TOKEN', metricsToken);
  const sinks = (f.sinks ?? defaultSinks()) as SinkConfig[];
  const sinkNames = sinks.map((s) => s.name);
  const duplicateSink = sinkNames.find((n, i) => sinkNames.indexOf(n) !== i);
  if (duplicateSink) throw new ConfigError(`sinks: the name "${duplicateSink}" is used twice`);

  const hooks = new Map<string, HookConfig>();
  // docs/reference.md#receiving: end-of-call is always there and the file declares more hooks; declaring end-of-call
  // changes it.
  for (const [name, h] of Object.entries({ 'end-of-call': hookSchema.parse({}), ...f.hooks })) {
    // Before the sink names: an in-call hook's sinks are wrong whatever they name.
    const inCall = h.kind === 'in-call';
    const misplaced = (inCall ? END_OF_CALL_ONLY : IN_CALL_ONLY).find((key) => h[key] !== undefined);
    if (misplaced) {
      const why = inCall ? 'an in-call hook stores nothing, so it has no' : 'only an in-call hook has a';
      throw new ConfigError(`hooks.${name}.${misplaced}: ${why} ${misplaced}`);
    }
    const platform = platformHook(name, h, f.body_limit);
    const unknownSink = h.sinks?.find((s) => !sinkNames.includes(s));
    if (unknownSink)
      throw new ConfigError(`hooks.${name}.sinks: no sink is named "${unknownSink}" (sinks: ${sinkNames.join(', ')})`);
    hooks.set(name, {
      name,
      kind: h.kind,
      description: h.description,
      parameters: h.parameters ?? (inCall ? IN_CALL_PARAMETERS : RECOMMENDED_PARAMETERS),
      keys: h.keys ?? apiKeys,
      // A platform's call id is the call: docs/reference.md#other-voice-platforms.
      dedup: h.dedup ?? (platform ? ['call_id'] : DEFAULT_DEDUP),
      on_conflict: h.on_conflict ?? 'keep',
      on_problem: h.on_problem ?? 'deliver',
      sinks: inCall ? [] : (h.sinks ?? sinkNames),
      allow_files: h.allow_files ?? false,
      handler: h.handler === undefined ? undefined : resolve(path ? dirname(resolve(path)) : '.', h.handler),
      handlerTimeoutMs: h.handler_timeout ?? 2_000,
      ...(platform && { platform }),
    });
  }

  const reconcile = f.reconcile && {
    apiUrl: f.reconcile.api_url,
    apiKey: f.reconcile.api_key,
    intervalMs: f.reconcile.interval,
    hook: f.reconcile.hook,
    lookbackMs: f.reconcile.lookback,
  };
  if (reconcile && !hooks.has(reconcile.hook))
    throw new ConfigError(
      `reconcile.hook: no hook is named "${reconcile.hook}" (hooks: ${[...hooks.keys()].join(', ')})`,
    );
  if (reconcile && hooks.get(reconcile.hook)!.kind === 'in-call')
    throw new ConfigError(`reconcile.hook: "${reconcile.hook}" is an in-call hook, which stores nothing`);
  // Reconcile reads the calling service's campaigns: a platform's calls are not in them.
  if (reconcile && hooks.get(reconcile.hook)!.platform)
    throw new ConfigError(
      `reconcile.hook: "${reconcile.hook}" is a ${hooks.get(reconcile.hook)!.platform!.name} hook; reconcile recovers the calling service's calls`,
    );

  const alerts = f.alerts ?? DEFAULT_ALERTS;
  const watched = alerts.rules.no_calls === false ? [] : (alerts.rules.no_calls.hooks ?? []);
  const unknownHook = watched.find((name) => !hooks.has(name));
  if (unknownHook)
    throw new ConfigError(
      `alerts.rules.no_calls.hooks: no hook is named "${unknownHook}" (hooks: ${[...hooks.keys()].join(', ')})`,
    );

  const retention = f.retention ?? DEFAULT_RETENTION;
  const dedup = new Map(
    [...hooks.values()].filter((hook) => hook.kind === 'end-of-call').map((hook) => [hook.name, hook.dedup]),
  );

  const port = env.PORT !== undefined ? parsePort(env.PORT) : (f.port ?? 8787);
  const logLevel = env.LOG_LEVEL ?? f.log_level ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL: "${logLevel}" is not one of ${LOG_LEVELS.join(', ')}`);
  }
  const databaseUrl = env.DATABASE_URL || f.database_url;
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL: must start with postgres:// or postgresql://');
  }

  return {
    port,
    host: env.HOST || f.host || '0.0.0.0',
    dataDir,
    logLevel: logLevel as Config['logLevel'],
    apiKeys,
    adminToken,
    personalToken: env.CALLHOOK_TOKEN || undefined,
    metricsToken,
    trustProxy: f.trust_proxy,
    timezone: f.timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone,
    secureCookies: f.secure_cookies,
    databaseUrl,
    phoneRegion: f.phone_region,
    dateOrder: f.date_order,
    bodyLimit: f.body_limit,
    authLimit: { max: f.auth_limit.max, windowMs: f.auth_limit.window },
    headersTimeoutMs: f.headers_timeout,
    requestTimeoutMs: f.request_timeout,
    shutdownGraceMs: f.shutdown_grace,
    storeDeadlineMs: f.store_deadline,
    hooks,
    sinks,
    reconcile,
    publicUrl: f.public_url,
    alerts,
    retention,
    filled,
    warnings: weakKeys([
      [env.CALLHOOK_API_KEYS !== undefined ? 'CALLHOOK_API_KEYS' : 'api_keys', apiKeys],
      [env.CALLHOOK_ADMIN_TOKEN ? 'CALLHOOK_ADMIN_TOKEN' : 'admin_token', adminToken === undefined ? [] : [adminToken]],
      ...[...hooks].map(([name, hook]): [string, readonly string[]] => [
        `hooks.${name}.keys`,
        hook.keys === apiKeys ? [] : hook.keys,
      ]),
    ])
      .concat(undeclaredDedupFields(hooks))
      .concat(retentionWarnings(retention, { dedup, reconcileLookbackMs: reconcile?.lookbackMs })),
    configPath: path ? resolve(path) : undefined,
  };
}

function defaultSinks(): SinkConfig[] {
  return [
    { name: 'log', type: 'log' },
    { name: 'jsonl', type: 'jsonl' },
  ];
}

function readConfigFile(path: string, env: Env, filled: FilledValue[]): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`config file ${path}: ${(err as Error).message}`, { cause: err });
  }
  let doc: unknown;
  try {
    doc = extname(path).toLowerCase() === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new ConfigError(`config file ${path}: ${(err as Error).message}`, { cause: err });
  }
  return interpolate(doc ?? {}, env, [], filled);
}

/**
 * `${VAR}` in any string of the file is replaced by that environment variable; `$${` keeps a literal `${`. Each
 * value filled in is told to `filled` with its place, since a variable is often how a secret reaches the config.
 */
function interpolate(value: unknown, env: Env, path: (string | number)[], filled: FilledValue[]): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$?\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (match, name: string) => {
      if (match.startsWith('$$')) return match.slice(1);
      const v = env[name];
      if (v === undefined) throw new ConfigError(`${formatPath(path)}: environment variable ${name} is not set`);
      filled.push({ path, variable: name, value: v });
      return v;
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => interpolate(v, env, [...path, i], filled));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, env, [...path, k], filled)]));
  }
  return value;
}

/** One line per place that holds a short key; the line names the place, never the key. */
function weakKeys(places: readonly [string, readonly string[]][]): string[] {
  return places
    .filter(([, keys]) => keys.some((key) => key.length < STRONG_KEY_LENGTH))
    .map(
      ([place]) =>
        `${place}: a key shorter than ${STRONG_KEY_LENGTH} characters can be guessed; \`callhook keys generate\` makes a strong one`,
    );
}
/**
 * docs/reference.md#deduplication: `config check` warns of a dedup entry naming a field the hook does not declare. Such
 * a field is still read from the undeclared extras (a `call_id` the sender adds), so it is a warning, not an error; the
 * default keys are left out, since the recommended parameters declare no call id.
 */
function undeclaredDedupFields(hooks: ReadonlyMap<string, HookConfig>): string[] {
  return [...hooks.values()]
    .filter((hook) => hook.kind === 'end-of-call' && hook.dedup !== DEFAULT_DEDUP)
    .flatMap((hook) => {
      const declared = new Set(hook.parameters.map((p) => p.identifier));
      const undeclared = [...new Set(hook.dedup.flat())].filter((field) => !declared.has(field));
      return undeclared.map(
        (field) =>
          `hooks.${hook.name}.dedup: "${field}" is not a declared parameter of the hook; it is read from the undeclared fields as received`,
      );
    });
}

/** What Intl accepts as a zone, which is what the pages format times with. */
function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

function parseKeyList(text: string): string[] {
  const keys = text
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean);
  for (const key of keys) checkEnvKey('CALLHOOK_API_KEYS', key);
  return keys;
}

function checkEnvKey(variable: string, key: string): void {
  const result = keySchema.safeParse(key);
  // The message names the variable, never the key itself: it is a secret.
  if (!result.success) throw new ConfigError(`${variable}: ${result.error.issues[0]?.message}`);
}

function parsePort(text: string): number {
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ConfigError(`PORT: "${text}" is not a port number`);
  return port;
}

function formatPath(path: readonly PropertyKey[]): string {
  return path.length === 0
    ? '(top level)'
    : path
        .map((p) => (typeof p === 'number' ? `[${p}]` : String(p)))
        .join('.')
        .replace(/\.\[/g, '[');
}

function describeIssues(error: z.ZodError, path: string | undefined): string {
  const lines = error.issues.map((issue) => {
    if (issue.code === 'unrecognized_keys') {
      return `${formatPath([...issue.path, issue.keys[0]!])}: unknown key${issue.keys.length > 1 ? ` (also ${issue.keys.slice(1).join(', ')})` : ''}`;
    }
    return `${formatPath(issue.path)}: ${issue.message}`;
  });
  return `config file ${path}: ${lines.join('; ')}`;
}

/**
 * A hook's platform, checked (docs/reference.md#other-voice-platforms): a platform needs its secret and sends calls
 * (no in-call hook), and its signature is the authentication (no `keys`); a secret, `drop` or a platform option on a
 * hook of the calling service is a mistake, named.
 */
function platformHook(name: string, h: z.output<typeof hookSchema>, bodyLimit: number): PlatformHook | undefined {
  const given = PLATFORM_OPTIONS.filter((key) => h[key] !== undefined);
  if (h.platform === undefined) {
    const stray = (['secret', 'drop', ...PLATFORM_OPTIONS] as const).find((key) => h[key] !== undefined);
    if (stray) throw new ConfigError(`hooks.${name}.${stray}: only a hook with a platform has a ${stray}`);
    return undefined;
  }
  const platform = platformOf(h.platform);
  if (!platform) throw new ConfigError(`hooks.${name}.platform: "${h.platform}" is not supported by this version`);
  if (h.kind === 'in-call') throw new ConfigError(`hooks.${name}.platform: an in-call hook has no platform`);
  if (h.keys !== undefined)
    throw new ConfigError(
      `hooks.${name}.keys: a ${h.platform} hook is authenticated by the platform's own signature, not by keys; give its secret`,
    );
  if (h.secret === undefined)
    throw new ConfigError(`hooks.${name}.secret: a ${h.platform} hook needs the platform's secret (usually \${VAR})`);
  const options = platform.options.safeParse(Object.fromEntries(given.map((key) => [key, h[key]])));
  if (!options.success) {
    const [issue] = options.error.issues;
    const key = issue?.code === 'unrecognized_keys' ? issue.keys[0] : issue?.path[0];
    const why = issue?.code === 'unrecognized_keys' ? `a ${h.platform} hook has no ${String(key)}` : issue?.message;
    throw new ConfigError(`hooks.${name}.${String(key)}: ${why}`);
  }
  return {
    name: h.platform,
    secret: h.secret,
    options: options.data,
    drop: h.drop ?? [],
    bodyLimitBytes: Math.max(bodyLimit, platform.bodyLimitBytes),
  };
}
