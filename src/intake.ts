import type { CountryCode } from 'libphonenumber-js';
import type { Config, HookConfig } from './config.js';
import { newId } from './ids.js';
import { compileParameters, dedupKey, normalize, type CompiledHook } from './normalize/index.js';
import type { CallRecord, Problem, RawRequest, RecordSource } from './record.js';
import type { CommitInput, CommitResult, Store } from './store/store.js';

/**
 * From fields to a committed record: normalise against the hook's declared parameters, derive the dedup key,
 * and commit record, outbox rows and receipt in one transaction. Shared by the webhook route and by anything
 * else that stores calls (reconciliation), so every call is treated alike.
 */

export interface Hook {
  config: HookConfig;
  /** Built once at start-up, reused for every request. */
  parameters: CompiledHook;
  /** The hook's sinks, each with its `when` filter. */
  sinks: readonly HookSink[];
}

export interface HookSink {
  name: string;
  accepts: (record: CallRecord) => boolean;
}

/** `sinks` gives each sink's filter; a sink it does not list takes every record. */
export function compileHooks(config: Pick<Config, 'hooks' | 'phoneRegion'>, sinks: readonly HookSink[] = []): Map<string, Hook> {
  const region = config.phoneRegion as CountryCode;
  const filters = new Map(sinks.map((s) => [s.name, s.accepts]));
  return new Map(
    [...config.hooks].map(([name, hook]) => [
      name,
      {
        config: hook,
        parameters: compileParameters(hook.parameters, { region }),
        sinks: hook.sinks.map((sink) => ({ name: sink, accepts: filters.get(sink) ?? (() => true) })),
      },
    ]),
  );
}

/** The sinks of a hook that want this record: `when` is evaluated once, when the record is stored. */
export function sinksFor(hook: Hook, record: CallRecord): string[] {
  return hook.sinks.filter((sink) => sink.accepts(record)).map((sink) => sink.name);
}

/** The sinks of the record's own hook that want it; none when that hook is no longer configured. */
export function sinksWanting(hooks: ReadonlyMap<string, Hook>, record: CallRecord): string[] {
  const hook = hooks.get(record.hook);
  return hook ? sinksFor(hook, record) : [];
}

/** Releases a held call to the sinks that want it, as if it had just been stored; undefined when it is not held. */
export async function releaseHeld(store: Store, hooks: ReadonlyMap<string, Hook>, record: CallRecord): Promise<string[] | undefined> {
  const sinks = sinksWanting(hooks, record);
  return (await store.release(record.id, sinks)) ? sinks : undefined;
}

export interface IntakeInput {
  hook: Hook;
  fields: Record<string, unknown>;
  raw: RawRequest;
  source: RecordSource;
  receipt: CommitInput['receipt'];
  receivedAt?: Date;
}

export type IntakeReply =
  | { status: 'accepted' | 'held'; id: string; dedup_key: string | null; problems: Problem[]; conflicts_with?: string }
  | { status: 'duplicate'; id: string; dedup_key: string | null };

export interface IntakeDeps {
  store: Store;
  /** Told after each commit that created deliveries, so they go out at once rather than at the next poll. */
  onCommitted?: () => void;
}

export function createIntake({ store, onCommitted }: IntakeDeps): (input: IntakeInput) => Promise<IntakeReply> {
  return async function ingest(input) {
    const call = prepareCall(input);
    const reply = replyTo(call, await store.commitCall(call.commit));
    if (reply.status === 'accepted') onCommitted?.();
    return reply;
  };
}

/** A call ready to commit: the record, its outbox rows and its receipt, with what the reply needs of it. */
export interface PreparedCall {
  commit: CommitInput;
  problems: Problem[];
}

/** Normalises the fields against the hook's declared parameters and derives the dedup key: no I/O. */
export function prepareCall({ hook, fields, raw, source, receipt, receivedAt = new Date() }: IntakeInput): PreparedCall {
  const { data, extra, problems } = normalize(fields, hook.parameters);
  const record: CallRecord = {
    id: newId(receivedAt.getTime()),
    hook: hook.config.name,
    dedup_key: dedupKey(hook.config.dedup, data, extra),
    received_at: receivedAt.toISOString(),
    source,
    revision: 1,
    data,
    extra,
    problems,
  };
  const held = problems.length > 0 && hook.config.on_problem === 'hold';
  return {
    commit: {
      record,
      status: held ? 'held' : 'accepted',
      raw,
      // A held call gets its deliveries when it is released.
      sinks: held ? [] : sinksFor(hook, record),
      receipt,
    },
    problems,
  };
}

/** The reply of contract section 2 to a committed call. */
export function replyTo({ commit, problems }: PreparedCall, result: CommitResult): IntakeReply {
  const dedup_key = commit.record.dedup_key;
  if (result.outcome === 'duplicate') return { status: 'duplicate', id: result.id, dedup_key };
  return { status: result.outcome, id: result.id, dedup_key, problems };
}
