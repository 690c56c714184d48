import { z } from 'zod';
import { deletingDurationSchema, durationSchema, formatDuration } from '../duration.js';

/**
 * The `retention` part of the config (docs/reference.md#retention): how long each kind of personal data is kept, each
 * off unless set. Every duration here decides what is deleted, so it takes a unit (a bare number is refused with the
 * fix, docs/reference.md#durations) and must be longer than 0; a mistake stops start-up and `config check` naming the
 * key.
 */

const keptFor = (key: string) => deletingDurationSchema.refine((ms) => ms > 0, `${key} must be longer than 0`);

export const retentionSchema = z.strictObject({
  /** Calls (with their deliveries, attempts, edits and receipts) deleted as by `callhook purge`. */
  calls: keptFor('calls').optional(),
  /** The body and query of a call's raw request. */
  raw: keptFor('raw').optional(),
  /** The bodies kept on receipts, and the receipts of refused requests. */
  receipts: keptFor('receipts').optional(),
  /** The audit log's entries, aged out by their time (docs/reference.md#retention). */
  audit: keptFor('audit').optional(),
  /** A field by its name in `data`, `extra` and the request: removed from calls older than its duration. */
  fields: z.record(z.string().min(1, 'a field name is not empty'), keptFor('a field')).default({}),
  /** How often `serve` applies it. */
  every: durationSchema.refine((ms) => ms >= 100, 'every must be at least 100ms').default(5 * 60_000),
});

export type RetentionConfig = z.output<typeof retentionSchema>;

export const DEFAULT_RETENTION: RetentionConfig = retentionSchema.parse({});

/** Whether any rule removes anything: without one, `serve` runs no pass at all. */
export function retains(config: RetentionConfig): boolean {
  return (
    config.calls !== undefined ||
    config.raw !== undefined ||
    config.receipts !== undefined ||
    config.audit !== undefined ||
    Object.keys(config.fields).length > 0
  );
}

/**
 * What is kept how long, one part a kind, as `config check`, the start-up banner and the dashboard's overview say it:
 * `calls kept forever` when nothing is set.
 */
export function keptParts(config: RetentionConfig): string[] {
  const parts = [config.calls === undefined ? 'calls kept forever' : `calls kept ${formatDuration(config.calls)}`];
  if (config.raw !== undefined) parts.push(`raw requests ${formatDuration(config.raw)}`);
  if (config.receipts !== undefined) parts.push(`receipts ${formatDuration(config.receipts)}`);
  for (const [field, ms] of Object.entries(config.fields)) parts.push(`field ${field} ${formatDuration(ms)}`);
  if (config.audit !== undefined) parts.push(`audit log ${formatDuration(config.audit)}`);
  return parts;
}

/** The retention as `config check` prints it: each duration in the grammar, and the one line of what is kept. */
export function describeRetention(config: RetentionConfig): Record<string, unknown> {
  const text = (ms: number | undefined) => (ms === undefined ? null : formatDuration(ms));
  return {
    kept: keptParts(config).join('; '),
    calls: text(config.calls),
    raw: text(config.raw),
    receipts: text(config.receipts),
    audit: text(config.audit),
    fields: Object.fromEntries(Object.entries(config.fields).map(([field, ms]) => [field, formatDuration(ms)])),
    every: formatDuration(config.every),
  };
}

/** What a hook is deduplicated on and what reconcile matches calls by: the fields whose removal has a cost. */
export interface RetentionNeighbours {
  /** Each end-of-call hook's dedup entries. */
  dedup: ReadonlyMap<string, readonly (string | readonly string[])[]>;
  /** reconcile.lookback, when reconcile is configured. */
  reconcileLookbackMs: number | undefined;
}

/**
 * The warnings of a retention that is allowed but costs something (docs/reference.md#retention), for serve to log and
 * `config check` to print: a field a dedup key is made of goes from the key too, which a repeat is recognised by; and
 * reconcile, which finds a stored call by its `recording_url` or its `phone_number`, stores a call again when that
 * field was removed before its lookback ended.
 */
export function retentionWarnings(
  config: RetentionConfig,
  { dedup, reconcileLookbackMs }: RetentionNeighbours,
): string[] {
  const warnings: string[] = [];
  for (const [field, ms] of Object.entries(config.fields)) {
    const hooks = [...dedup].filter(([, entries]) => entries.flat().includes(field)).map(([hook]) => hook);
    if (hooks.length > 0)
      warnings.push(
        `retention.fields.${field}: hook ${hooks.join(', ')} is deduplicated on ${field}: once it is removed, a repeat of the call is no longer recognised as one`,
      );
    if (reconcileLookbackMs !== undefined && ms < reconcileLookbackMs && RECONCILE_MATCHES.includes(field))
      warnings.push(
        `retention.fields.${field}: ${formatDuration(ms)} is shorter than reconcile.lookback (${formatDuration(reconcileLookbackMs)}): reconcile finds a stored call by its ${field}, and stores a call again once it is removed`,
      );
  }
  // A raw request or a field kept as long as its call goes with the call: the duration says nothing more.
  const calls = config.calls;
  if (calls !== undefined) {
    const longer = [
      ...(config.raw !== undefined && config.raw >= calls ? [['raw', config.raw] as const] : []),
      ...Object.entries(config.fields)
        .filter(([, ms]) => ms >= calls)
        .map(([field, ms]) => [`fields.${field}`, ms] as const),
    ];
    for (const [key, ms] of longer)
      warnings.push(
        `retention.${key}: ${formatDuration(ms)} is not shorter than retention.calls (${formatDuration(calls)}): the calls go first, and it with them`,
      );
  }
  return warnings;
}

/** What reconcile matches a stored call by (reconcile/reconcile.ts). */
const RECONCILE_MATCHES = ['recording_url', 'phone_number'];
