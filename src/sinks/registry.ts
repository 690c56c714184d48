import { dirname, isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { type Config, ConfigError, type SinkConfig } from '../config.js';
import { type Filter, filterSchema } from '../routing/filter.js';
import { importUserModule } from '../user-module.js';
import { type DeliveryPolicy, deliveryOptionsSchema, toPolicy } from './policy.js';
import { reopening } from './reopening.js';
import type { Sink, SinkContext, SinkType } from './sink.js';

/**
 * Built-in sink types: each is a folder here, `<type>/<type>.ts`, whose default export is the type, and a line of
 * this table, which imports it only when a config names it, the way pino resolves a transport's `target`: a queue or
 * a CRM client is not loaded by a receiver that does not use it (docs/reference.md#queues-and-databases,
 * test/sink-loading.test.ts). Adding a type is its folder and its line.
 */
const BUILT_IN: Readonly<Record<string, () => Promise<{ default: SinkType }>>> = {
  log: () => import('./log/log.js'),
  jsonl: () => import('./jsonl/jsonl.js'),
  http: () => import('./http/http.js'),
  slack: () => import('./slack/slack.js'),
  'tag-contact': () => import('./tag-contact/tag-contact.js'),
  gohighlevel: () => import('./gohighlevel/gohighlevel.js'),
  'google-sheets': () => import('./google-sheets/google-sheets.js'),
  hubspot: () => import('./hubspot/hubspot.js'),
  nats: () => import('./nats/nats.js'),
  postgres: () => import('./postgres/postgres.js'),
  rabbitmq: () => import('./rabbitmq/rabbitmq.js'),
  'redis-stream': () => import('./redis-stream/redis-stream.js'),
  'zoho-crm': () => import('./zoho-crm/zoho-crm.js'),
};
/** Listed first in messages, as the simplest; the others follow by name. */
const FIRST = ['log', 'jsonl', 'http', 'slack', 'tag-contact'];

/** The built-in types there are, in the order messages list them. */
export function builtInTypes(): string[] {
  const rank = (type: string) => (FIRST.includes(type) ? FIRST.indexOf(type) : FIRST.length);
  return Object.keys(BUILT_IN).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

/** A built-in type, imported now; undefined for a name that is none (`toString` included). */
export async function builtInType(type: string): Promise<SinkType | undefined> {
  return Object.hasOwn(BUILT_IN, type) ? (await BUILT_IN[type]!()).default : undefined;
}

/** What the delivery engine needs to know of one configured sink, checked before anything is opened. */
export interface SinkSpec {
  name: string;
  type: string;
  policy: DeliveryPolicy;
  /** The options its type declares secret (sink.ts), for secret-values.ts. */
  secretOptions: readonly string[];
  /**
   * Its `when`, checked and kept as data: compiled with the hooks (routing/routes.ts), on the event loop and on the
   * writer's thread alike, and evaluated when a record is stored, so the outbox holds only the records it wants.
   */
  when: Filter | undefined;
  /**
   * Whether it takes test traffic (`source` `replay` or `simulate`, docs/reference.md#test-traffic): its
   * `test_traffic`, by default true for the types that only write where the operator reads (TEST_TRAFFIC_TYPES).
   */
  testTraffic: boolean;
  open: (context: SinkContext) => Promise<Sink>;
}

/**
 * The types that take test traffic unless told `test_traffic: false`: they write to the process log and to a file on
 * the receiver's own disk, where a replay is checked. Every other type reaches something others read (a CRM, a table,
 * a queue, a channel), and takes it only with `test_traffic: true`.
 */
const TEST_TRAFFIC_TYPES: readonly string[] = ['log', 'jsonl'];

const testTrafficSchema = z.boolean({ error: 'test_traffic is true or false' }).optional();

/**
 * Checks every sink entry (its type, its own options, and the keys every entry may carry: `when`, `test_traffic`,
 * `retry`, `timeout`, `concurrency`, `rate`, `paused`; `map` is a type's own) and loads user modules, so a bad config
 * stops start-up with a message naming the option, before any sink is opened.
 * `baseDir` is where a `module:` path is resolved from: the config file's folder.
 */
export async function resolveSinks(configs: readonly SinkConfig[], baseDir = process.cwd()): Promise<SinkSpec[]> {
  const specs: SinkSpec[] = [];
  for (const [index, config] of configs.entries()) {
    const where = `sinks[${index}] (${config.name})`;
    const type =
      config.type === 'module' ? await loadModuleSink(config, where, baseDir) : await builtIn(config.type, index);
    const {
      name,
      type: _type,
      when: rawWhen,
      test_traffic: rawTestTraffic,
      retry,
      timeout,
      concurrency,
      rate,
      paused,
      ...rest
    } = config;
    const options = parse(type.options, config.type === 'module' ? withoutKey(rest, 'module') : rest, where);
    const delivery = {
      retry,
      timeout,
      concurrency: concurrency ?? type.defaults?.concurrency,
      rate: rate ?? type.defaults?.rate,
      paused,
    };
    const common = parse(deliveryOptionsSchema, dropUndefined(delivery), where);
    const when = rawWhen === undefined ? undefined : parse(filterSchema, rawWhen, `${where}.when`);
    const testTraffic =
      parse(testTrafficSchema, rawTestTraffic, `${where}.test_traffic`) ?? TEST_TRAFFIC_TYPES.includes(config.type);
    specs.push({
      name,
      type: config.type,
      policy: toPolicy(common),
      secretOptions: type.secretOptions ?? [],
      when,
      testTraffic,
      open: async (context) => type.open(options, context),
    });
  }
  return specs;
}

/** The config's sinks, with `module:` paths resolved from the config file's folder (the working folder without one). */
export function resolveConfiguredSinks(config: Pick<Config, 'sinks' | 'configPath'>): Promise<SinkSpec[]> {
  return resolveSinks(config.sinks, config.configPath ? dirname(config.configPath) : process.cwd());
}

/**
 * Opens every sink. One whose service cannot be reached does not stop start-up
 * (docs/reference.md#queues-and-databases): it is told to `onOpenFailed` (when its factory fails, or later when its
 * probe does), and its deliveries fail with that error as their attempt's, retried on their schedule, each attempt
 * opening it again until it opens (reopening.ts). A ConfigError (a module whose factory returned no sink) is a mistake
 * in the config, not an outage: it closes the sinks already opened and stops start-up, as a bad option does.
 */
export async function openSinks(
  specs: readonly SinkSpec[],
  context: Omit<SinkContext, 'name'>,
  { onOpenFailed }: { onOpenFailed?: (sink: string, err: unknown) => void | Promise<void> } = {},
): Promise<Map<string, Sink>> {
  const sinks = new Map<string, Sink>();
  for (const spec of specs) {
    const open = () => spec.open({ ...context, name: spec.name });
    try {
      const sink = await open();
      sinks.set(spec.name, sink);
      // Connections are made by the first delivery; the probe makes one now, without waiting for it, so that a server
      // down at start-up is said at once (docs/reference.md#queues-and-databases), and the deliveries then retry as
      // usual.
      sink.probe?.().catch((err: unknown) => onOpenFailed?.(spec.name, err));
    } catch (err) {
      if (err instanceof ConfigError) {
        await Promise.allSettled([...sinks.values()].map((s) => s.close?.()));
        throw err;
      }
      await onOpenFailed?.(spec.name, err);
      sinks.set(spec.name, reopening(open));
    }
  }
  return sinks;
}

async function builtIn(type: string, index: number): Promise<SinkType> {
  const loaded = await builtInType(type);
  if (!loaded)
    throw new ConfigError(
      `sinks[${index}].type: unknown sink type "${type}" (known types: ${[...builtInTypes(), 'module'].join(', ')})`,
    );
  return loaded;
}

/**
 * `type: module`: a sink written by the user. Its default export is the factory `(options, context) => Sink`;
 * an optional named export `options` (a zod schema, or any Standard Schema) checks the entry's other keys at
 * start-up, and `secretOptions` names the ones to mask.
 */
async function loadModuleSink(config: SinkConfig, where: string, baseDir: string): Promise<SinkType> {
  const path = config.module;
  if (typeof path !== 'string' || path === '')
    throw new ConfigError(`${where}.module: the path of the sink's module is required with type module`);
  const file = isAbsolute(path) ? path : resolve(baseDir, path);
  const loaded = await importUserModule<(options: unknown, context: SinkContext) => unknown>(
    file,
    `${where}.module`,
    'a factory (options, context) => Sink',
  );
  const factory = loaded.default;
  const options = userSchema(loaded.options, where);
  const secretOptions = Array.isArray(loaded.secretOptions)
    ? loaded.secretOptions.filter((o): o is string => typeof o === 'string')
    : undefined;
  return {
    type: 'module',
    options,
    secretOptions,
    async open(parsed, context) {
      const sink = (await factory(parsed, context)) as Partial<Sink> | undefined;
      if (typeof sink?.deliver !== 'function')
        throw new ConfigError(
          `${where}.module: the factory of ${file} returned no object with deliver(record, context)`,
        );
      return sink as Sink;
    },
  };
}

/**
 * A module in a folder of its own imports its own copy of zod (its own package.json, docs/custom-sinks.md), which
 * is not an instance of ours: it is read through Standard Schema (https://standardschema.dev), which zod 3.24+
 * and 4, valibot and arktype implement, so any of them checks a module's options.
 */
function userSchema(exported: unknown, where: string): z.ZodType {
  if (exported === undefined) return z.record(z.string(), z.unknown());
  if (exported instanceof z.ZodType) return exported;
  const standard = (exported as { '~standard'?: StandardSchema } | null)?.['~standard'];
  if (typeof standard?.validate !== 'function')
    throw new ConfigError(`${where}.module: its export \`options\` is not a schema (zod, or another Standard Schema)`);
  return z.unknown().transform((value, ctx) => {
    const result = standard.validate(value);
    if (result instanceof Promise) {
      ctx.addIssue({
        code: 'custom',
        message: "the module's options schema is asynchronous, and options are checked before start-up goes on",
      });
      return z.NEVER;
    }
    if (!result.issues) return result.value;
    for (const issue of result.issues) {
      ctx.addIssue({
        code: 'custom',
        path: (issue.path ?? []).map((p) => (typeof p === 'object' ? p.key : p)) as PropertyKey[],
        message: issue.message,
      });
    }
    return z.NEVER;
  });
}

/** The part of the Standard Schema interface (v1) callhook uses. */
interface StandardSchema {
  validate(value: unknown): StandardResult | Promise<StandardResult>;
}
type StandardResult =
  | { value: unknown; issues?: undefined }
  | { issues: readonly { message: string; path?: readonly (PropertyKey | { key: PropertyKey })[] }[] };

function parse<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const path = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0]] : issue.path;
  const message = issue.code === 'unrecognized_keys' ? 'unknown option' : issue.message;
  throw new ConfigError(`${[where, ...path].join('.')}: ${message}`);
}

function withoutKey(value: Record<string, unknown>, key: string): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([k]) => k !== key));
}

function dropUndefined(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
}
