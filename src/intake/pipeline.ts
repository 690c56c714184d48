import type { CountryCode } from 'libphonenumber-js';
import type { Config, HookConfig } from '../config.js';
import { newId } from '../ids.js';
import { type CompiledHook, compileParameters, contentHash, dedupKey, normalize } from '../normalize/index.js';
import type { CallRecord, Problem, RawRequest, RecordSource } from '../record.js';
import { compileRoutes, type Route, type SinkWhen } from '../routing/routes.js';
import type { AdminQueries } from '../store/admin-queries.js';
import type { CallStatus, CallStore, CommitInput, CommitResult } from '../store/calls.js';

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
  sinks: readonly Route[];
}

/** `sinks` gives each sink's `when`, as the config says it; a sink it does not list takes every record. */
export function compileHooks(
  config: Pick<Config, 'hooks' | 'phoneRegion' | 'dateOrder'>,
  sinks: readonly SinkWhen[] = [],
): Map<string, Hook> {
  const region = config.phoneRegion as CountryCode;
  return new Map(
    [...config.hooks].map(([name, hook]) => [
      name,
      {
        config: hook,
        parameters: compileParameters(hook.parameters, { region, dateOrder: config.dateOrder }),
        sinks: compileRoutes(hook.sinks, sinks),
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
export async function releaseHeld(
  store: Pick<AdminQueries, 'release'>,
  hooks: ReadonlyMap<string, Hook>,
  record: CallRecord,
): Promise<string[] | undefined> {
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
  ingests?: CommitInput['ingests'];
  /** A platform's call (docs/reference.md#other-voice-platforms): its name, and the rest of its payload for `extra`. */
  platform?: { name: string; rest: Record<string, unknown> };
}

export type IntakeReply =
  | { status: 'accepted' | 'held'; id: string; dedup_key: string | null; problems: Problem[]; conflicts_with?: string }
  | { status: 'duplicate'; id: string; dedup_key: string | null };

export interface IntakeDeps {
  store: Pick<CallStore, 'commitCall'>;
  /** Told after each commit that created deliveries, so they go out at once rather than at the next poll. */
  onCommitted?: () => void;
}

/** A call's fields, already read, to its committed record. */
export type IngestFields = (input: IntakeInput) => Promise<IntakeReply>;

export function createIntake({ store, onCommitted }: IntakeDeps): IngestFields {
  const commit = (input: CommitInput) => store.commitCall(input);
  return async function ingest(input) {
    const reply = await commitCall(input.hook, prepareCall(input), commit);
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
export function prepareCall({
  hook,
  fields,
  raw,
  source,
  receipt,
  receivedAt = new Date(),
  ingests,
  platform,
}: IntakeInput): PreparedCall {
  const normalized = normalize(fields, hook.parameters);
  const { data, problems } = normalized;
  // The rest of a platform's payload goes to extra under its own names, after what normalising put there.
  const extra = platform ? { ...platform.rest, ...normalized.extra } : normalized.extra;
  const hash = contentHash(data, extra, problems);
  // docs/reference.md#deduplication: a call none of whose declared parameters has a value cannot be told from another
  // call.
  const empty = Object.keys(data).length === 0 && problems.every((p) => p.code === 'missing_required');
  const record: CallRecord = {
    // Ids sort by arrival in the store: a refused request ingested now arrives now, though the sender sent it then
    // (received_at), so a client paging for new calls after the last id it saw finds it.
    id: newId(source === 'recovered' ? Date.now() : receivedAt.getTime()),
    hook: hook.config.name,
    dedup_key: dedupKey(hook.config.dedup, data, extra, { empty, hash }),
    received_at: receivedAt.toISOString(),
    source,
    revision: 1,
    data,
    extra,
    problems,
    ...(platform && { platform: platform.name }),
  };
  const status = problems.length > 0 && hook.config.on_problem === 'hold' ? 'held' : 'accepted';
  return {
    commit: {
      record,
      contentHash: hash,
      onConflict: hook.config.on_conflict,
      status,
      raw,
      sinks: sinksDue(hook, record, status),
      receipt,
      ingests,
    },
    problems,
  };
}

/** A held call gets its deliveries when it is released. */
const sinksDue = (hook: Hook, record: CallRecord, status: CallStatus): string[] =>
  status === 'held' ? [] : sinksFor(hook, record);

/**
 * Commits a prepared call, and a conflict as a call of its own (docs/reference.md#deduplication, `on_conflict: keep`):
 * a stored call has the same key but other content, so this is another call, stored under the key of its content (its
 * own repeats are then duplicates of it), carrying `conflicts_with`, and delivered like any call. Its sinks are chosen
 * again, as `when` may look at `conflicts_with` or `dedup_key`.
 */
export async function commitCall(
  hook: Hook,
  call: PreparedCall,
  commit: (input: CommitInput) => Promise<CommitResult>,
): Promise<IntakeReply> {
  const result = await commit(call.commit);
  if (result.outcome !== 'conflict') return replyTo(call, result);
  const { commit: first } = call;
  const record: CallRecord = { ...first.record, dedup_key: `sha256:${first.contentHash}`, conflicts_with: result.id };
  // A call stored under this content key has this content, so the second commit finds no conflict; should it ever
  // (a store written by an older version that hashed otherwise), the call is counted as a duplicate with its raw
  // body kept on the receipt, rather than refused: a 503 here would lose the call.
  const kept: PreparedCall = {
    ...call,
    commit: { ...first, record, onConflict: 'duplicate', sinks: sinksDue(hook, record, first.status) },
  };
  return replyTo(kept, await commit(kept.commit));
}

/** The reply of docs/reference.md#receiving to a committed call. */
export function replyTo({ commit, problems }: PreparedCall, result: CommitResult): IntakeReply {
  const { dedup_key, conflicts_with } = commit.record;
  if (result.outcome === 'duplicate' || result.outcome === 'conflict')
    return { status: 'duplicate', id: result.id, dedup_key };
  return conflicts_with === undefined
    ? { status: result.outcome, id: result.id, dedup_key, problems }
    : { status: result.outcome, id: result.id, dedup_key, conflicts_with, problems };
}
