import type { Logger } from 'pino';
import type { z } from 'zod';
import type { CallRecord } from '../record.js';

/**
 * The plugin interface. A sink type is `{ type, options, secretOptions, defaults?, open }`; `open(options, context)`
 * gives a Sink, `{ deliver, probe?, close? }`, whose `close()` flushes, the way pino-abstract-transport's
 * `build(fn, { close })` gives a transport. A sink knows nothing of HTTP intake or of the store; what it throws is
 * in errors.ts. A user's module (`type: module`, docs/custom-sinks.md) exports the `open` part alone, as a factory.
 */

export interface DeliveryContext {
  /** 1 for the first attempt. */
  attempt: number;
  /**
   * `<record id>:<sink name>`: the same on every attempt, so a receiver can drop repeats
   * (docs/reference.md#sinks-and-delivery).
   */
  idempotencyKey: string;
  /** Aborted when the attempt times out or the process shuts down. */
  signal: AbortSignal;
  log: Logger;
}

/**
 * What a delivery may say of itself when it succeeds: a `note` an operator should read with the attempt (a CRM
 * search that found several contacts and used the most recently updated, docs/reference.md#crm-sinks).
 */
export interface DeliveryResult {
  note?: string;
}

export interface Sink {
  // biome-ignore lint/suspicious/noConfusingVoidType: most sinks' deliver is an async function that returns nothing.
  deliver(record: CallRecord, context: DeliveryContext): Promise<void | DeliveryResult>;
  /**
   * Reaches the sink's service once, as a delivery would (connects, finds its table, stream or queue), and throws what
   * a delivery would throw. Called in the background at start-up, so that a sink whose server is down says why in GET
   * /admin/sinks before any delivery has failed (docs/reference.md#queues-and-databases); it never holds start-up.
   */
  probe?(): Promise<void>;
  /**
   * Erases what the sink holds of these records downstream, for a person's erasure (docs/reference.md#erasure): the
   * rows, entries, lines it wrote for them, and any marker kept beside them. Resolves to how many it removed (0 when
   * it held none of them). A sink without it cannot erase: the erasure lists it with the record ids it received, for
   * the operator to erase there by hand. Throws what a delivery would throw when its service cannot be reached.
   */
  erase?(recordIds: readonly string[], context: EraseContext): Promise<number>;
  close?(): Promise<void>;
}

export interface EraseContext {
  signal: AbortSignal;
  log: Logger;
}

export interface SinkContext {
  name: string;
  dataDir: string;
  log: Logger;
  /** The deployment's DATABASE_URL (config.ts reads it), the default of a sink that writes to PostgreSQL. */
  databaseUrl?: string;
  /**
   * The end-of-call hooks of the config: what each declares and to which sinks it delivers, for a sink whose default
   * layout follows the declared parameters (a spreadsheet's columns, docs/reference.md#crm-sinks).
   */
  hooks?: readonly HookSummary[];
  /**
   * Masks a secret the options lead to but do not hold (a private key read from the file an option names, an access
   * token fetched with them) wherever callhook writes text, as the options' own secrets are
   * (docs/reference.md#secrets). The function it returns forgets it again: call it for a token a newer one has
   * replaced, so that a long run does not mask an ever-growing list.
   */
  secret?(value: string): () => void;
}

export interface HookSummary {
  name: string;
  /** The declared parameters' identifiers, in declaration order. */
  parameters: readonly string[];
  /** The sinks its calls go to. */
  sinks: readonly string[];
}

export interface SinkType<Schema extends z.ZodType = z.ZodType> {
  /**
   * The name a config entry's `type` gives it: a built-in type's key in the registry's table (registry.ts), which
   * is its folder's name, or `module`.
   */
  type: string;
  /**
   * Delivery settings this type works best with, where the config entry does not say: a CRM's `rate` keeps the
   * requests of its deliveries within the CRM's documented limit (docs/reference.md#what-every-sink-shares).
   */
  defaults?: { concurrency?: number; rate?: { max: number; per: number | string } };
  /** Options after `name` and `type`, checked once at start-up; a bad one stops start-up naming the option. */
  options: Schema;
  /**
   * The options that hold a secret (dotted paths, `signing.secret`), masked wherever callhook writes text
   * (docs/reference.md#operating). Options named like one (`token`, `password`, `api_key`…) and the credential headers
   * of a `headers` map are secret whatever a type declares (secret-values.ts).
   */
  secretOptions?: readonly string[];
  /**
   * Called once at start-up and, when it throws, again at each attempt until it opens (registry.ts, reopening.ts).
   * Connections are best made by the first delivery, so that a service down at start-up only fails deliveries.
   */
  open(options: z.output<Schema>, context: SinkContext): Sink | Promise<Sink>;
}

/** Declares a sink type with its options' types inferred from the schema. */
export function defineSinkType<Schema extends z.ZodType>(type: SinkType<Schema>): SinkType<Schema> {
  return type;
}
