import type { CountryCode } from 'libphonenumber-js';
import { CallhookError } from '../errors.js';
import { type Hook, releaseHeld, sinksWanting } from '../intake/pipeline.js';
import { DEFAULT_PHONE_REGION, toE164 } from '../normalize/formats.js';
import { type CallRecord, isTestTraffic, type Problem } from '../record.js';
import type {
  AdminQueries,
  AttemptInfo,
  CallEdit,
  DeliveryInfo,
  ListCallsQuery,
  ReceiptInfo,
  StoredCall,
} from '../store/admin-queries.js';
import { applyEdit, type EditValue, undeclaredFields } from './edit-rules.js';

/**
 * The operations on calls (docs/reference.md#operating and docs/reference.md#editing-a-call), shared by the admin API,
 * the dashboard and, through the admin API, the CLI: so what may be released, what an edit does and which sinks a call
 * goes to are written once. Each takes its deps first; `callOperations(deps)` binds them. Failures are CallhookErrors
 * (404 no such call, 400 a bad field or sink, 409 a call in the wrong state), which every caller renders as the Error
 * object.
 */

export interface CallsDeps {
  store: AdminQueries;
  hooks: ReadonlyMap<string, Hook>;
  /** Every configured sink, the ones a redelivery may name. */
  sinkNames: readonly string[];
  /**
   * The sinks that take test traffic (docs/reference.md#test-traffic), the only ones a test call may be redelivered
   * to by name; none when not given.
   */
  testSinks?: readonly string[];
  /** Wakes the delivery worker after something became due. */
  notify: () => void;
  /**
   * A phone filter is read as intake reads a number (docs/reference.md#operating), in this region when it has no
   * country code.
   */
  phoneRegion?: string;
  /** The time an edit is made at; the clock by default. */
  now?: () => Date;
}

/**
 * What the reading operations need: the CLI opens the store itself for them, with no serve running
 * (docs/reference.md#command-line).
 */
export type ReadDeps = Pick<CallsDeps, 'store' | 'phoneRegion'>;

/**
 * The calls list's filters: the store's, with the phone number written any way, and test traffic left out unless
 * asked for (listCalls).
 */
export type CallsQuery = Omit<ListCallsQuery, 'limit' | 'hideTest'> & {
  limit: number;
  /** Lists test traffic (`replay`, `simulate`) too: the "Show test calls" of the pages. */
  testCalls?: boolean;
};

export interface CallsPage {
  calls: StoredCall[];
  /** The cursor (`after`) of the next page, null on the last. */
  next: string | null;
}

/** One call with everything kept of it: raw request, receipts (duplicates' too), deliveries, attempts, edits. */
export interface CallDetail extends StoredCall {
  receipts: ReceiptInfo[];
  deliveries: DeliveryInfo[];
  attempts: AttemptInfo[];
  /** Oldest first: edits and review marks (docs/reference.md#editing-a-call). */
  edits: CallEdit[];
}

export interface EditRequest {
  /** Declared fields of the call's hook and their new values; null or "" empties one. */
  data: Record<string, EditValue>;
}

/** The PATCH reply (docs/reference.md#editing-a-call), with the history entry the edit made (null: nothing changed). */
export interface EditedCall {
  record: CallRecord;
  problems: Problem[];
  edit: CallEdit | null;
}

export interface ReleasedCall {
  id: string;
  status: 'accepted';
  sinks: string[];
}

export interface RedeliveredCall {
  id: string;
  sinks: string[];
  /** How many deliveries became pending; the others were pending or in flight already. */
  scheduled: number;
}

/** How often an edit is made again from the stored record when another edit of the call came first. */
const EDIT_TRIES = 10;

/**
 * A page of calls. Test traffic (docs/reference.md#test-traffic) is listed only when asked for: with `testCalls`, or a
 * `source` filter, which names what it wants.
 */
export async function listCalls(
  { store, phoneRegion = DEFAULT_PHONE_REGION }: ReadDeps,
  { phone, testCalls = false, ...query }: CallsQuery,
): Promise<CallsPage> {
  // Any spelling of a number finds the calls stored under its E.164 form; text that is no number is used as it is.
  const e164 = phone === undefined ? undefined : (toE164(phone, phoneRegion as CountryCode) ?? phone.trim());
  const hideTest = !testCalls && query.source === undefined;
  const calls = await store.listCalls({ ...query, phone: e164, hideTest });
  return { calls, next: calls.length === query.limit ? calls.at(-1)!.record.id : null };
}

/**
 * The review queue (docs/reference.md#dashboard): held calls and calls with problems not marked reviewed, oldest first;
 * never test traffic (docs/reference.md#test-traffic).
 */
export function reviewQueue(deps: ReadDeps, query: Omit<CallsQuery, 'review' | 'order'>): Promise<CallsPage> {
  return listCalls(deps, { ...query, review: true, order: 'asc' });
}

export async function showCall(
  {
    store,
  }: { store: Pick<AdminQueries, 'getCall' | 'listReceipts' | 'listDeliveries' | 'listAttempts' | 'listEdits'> },
  id: string,
): Promise<CallDetail> {
  const call = await callOr404(store, id);
  const [receipts, deliveries, attempts, edits] = await Promise.all([
    store.listReceipts(id),
    store.listDeliveries({ callId: id, limit: 500 }),
    store.listAttempts(id),
    store.listEdits(id),
  ]);
  return { ...call, receipts, deliveries, attempts, edits };
}

/**
 * Changes the named fields of a call (docs/reference.md#editing-a-call; edit-rules.ts says how), as a new revision kept
 * with its entry in the history. Never redelivers: a held call stays held until released ("save and release"), a
 * delivered one is sent again only by a redeliver. A field the hook does not declare is refused (400): `extra` holds
 * what the sender sent as it came, and nothing normalises it.
 */
export async function editCall(deps: CallsDeps, id: string, { data }: EditRequest, by?: string): Promise<EditedCall> {
  const { store, hooks, now = () => new Date() } = deps;
  for (let tries = 0; tries < EDIT_TRIES; tries++) {
    const { record } = await callOr404(store, id);
    const hook = hooks.get(record.hook);
    if (!hook)
      throw new CallhookError(
        'CONFLICT',
        `call ${id} is of the hook ${record.hook}, which is not configured: its parameters are unknown`,
      );
    const unknown = undeclaredFields(data, hook.parameters);
    if (unknown.length > 0) {
      const declared = hook.parameters.parameters.map((p) => p.identifier).join(', ');
      throw new CallhookError(
        'BAD_REQUEST',
        `data.${unknown[0]}: not a parameter of the hook ${record.hook} (parameters: ${declared})`,
      );
    }
    const { record: edited, edit: made } = applyEdit(record, hook.parameters, data, now());
    if (!made) return { record, problems: record.problems, edit: null };
    const edit: CallEdit = by === undefined ? made : { ...made, by };
    const outcome = await store.editCall(id, edit, edited);
    if (outcome === 'edited') return { record: edited, problems: edited.problems, edit };
    if (outcome === 'missing') throw notFound(id);
    // stale: another edit came first; this one is made again from the record as that edit left it.
  }
  throw new CallhookError('CONFLICT', `call ${id} is being edited by others: try again`);
}

/**
 * Marks a call with problems as needing no change (docs/reference.md#editing-a-call): it leaves the review queue (a
 * held call once it is also released), and the mark is kept in its edit history. A call already marked at its revision
 * keeps the mark it has.
 */
export async function markReviewed(
  deps: CallsDeps,
  id: string,
  by?: string,
): Promise<{ record: CallRecord; edit: CallEdit }> {
  const { store, now = () => new Date() } = deps;
  for (let tries = 0; tries < EDIT_TRIES; tries++) {
    const { record } = await callOr404(store, id);
    if (record.problems.length === 0) throw new CallhookError('CONFLICT', `call ${id} has no problems to review`);
    const marked = (await store.listEdits(id)).find((e) => e.reviewed && e.revision === record.revision);
    if (marked) return { record, edit: marked };
    const edit: CallEdit = {
      at: now().toISOString(),
      fields: {},
      revision: record.revision,
      reviewed: true,
      ...(by === undefined ? {} : { by }),
    };
    const outcome = await store.editCall(id, edit);
    if (outcome === 'edited') return { record, edit };
    if (outcome === 'missing') throw notFound(id);
  }
  throw new CallhookError('CONFLICT', `call ${id} is being edited by others: try again`);
}

/** Releases a held call, as it is now (its edits included), to the sinks of its hook that want it. */
export async function releaseCall({ store, hooks, notify }: CallsDeps, id: string): Promise<ReleasedCall> {
  const sinks = await releaseHeld(store, hooks, (await callOr404(store, id)).record);
  if (!sinks) throw new CallhookError('CONFLICT', `call ${id} is not held`);
  notify();
  return { id, status: 'accepted', sinks };
}

/**
 * Sends a call again, to the sinks named or, without names, to every sink of its hook that wants it as it is now.
 * A sink receives the record as it is when it is delivered to, under the idempotency key of its revision.
 *
 * A sink named overrides its `when`, but not its test-traffic rule (docs/reference.md#test-traffic): a test call
 * named to a sink that does not take test traffic is refused (400) rather than sent, since such a sink reaches what
 * others read (a CRM, a table, a queue), and nothing is scheduled. Without names, a test call goes to the sinks of its
 * hook that take it, as at intake.
 */
export async function redeliverCall(
  { store, hooks, sinkNames, testSinks = [], notify }: CallsDeps,
  id: string,
  sinks?: readonly string[],
): Promise<RedeliveredCall> {
  const unknown = sinks?.find((s) => !sinkNames.includes(s));
  if (unknown) throw new CallhookError('BAD_REQUEST', `no sink is named ${unknown} (sinks: ${sinkNames.join(', ')})`);
  const call = await callOr404(store, id);
  const { source } = call.record;
  const refused = isTestTraffic(source) ? sinks?.find((s) => !testSinks.includes(s)) : undefined;
  if (refused)
    throw new CallhookError(
      'BAD_REQUEST',
      `sink ${refused} does not take test traffic: call ${id} is a test call (source ${source}); set test_traffic: true on the sink to send it test calls`,
    );
  const targets = sinks ? [...sinks] : sinksWanting(hooks, call.record);
  const scheduled = (await store.redeliver(id, targets)) ?? 0;
  if (scheduled > 0) notify();
  return { id, sinks: targets, scheduled };
}

/** The operations with their deps bound, for a caller that holds one set of deps (the admin API, the dashboard). */
export function callOperations(deps: CallsDeps) {
  return {
    listCalls: (query: CallsQuery) => listCalls(deps, query),
    reviewQueue: (query: Omit<CallsQuery, 'review' | 'order'>) => reviewQueue(deps, query),
    showCall: (id: string) => showCall(deps, id),
    /** `by`: who edits (docs/reference.md#operators), kept in the edit's entry. */
    editCall: (id: string, request: EditRequest, by?: string) => editCall(deps, id, request, by),
    markReviewed: (id: string, by?: string) => markReviewed(deps, id, by),
    releaseCall: (id: string) => releaseCall(deps, id),
    redeliverCall: (id: string, sinks?: readonly string[]) => redeliverCall(deps, id, sinks),
  };
}

export type CallOperations = ReturnType<typeof callOperations>;

const notFound = (id: string) => new CallhookError('NOT_FOUND', `no call with id ${id}`);

async function callOr404(store: Pick<AdminQueries, 'getCall'>, id: string): Promise<StoredCall> {
  const call = await store.getCall(id);
  if (!call) throw notFound(id);
  return call;
}
