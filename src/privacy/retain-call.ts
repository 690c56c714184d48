import type { CallRecord, RawRequest } from '../record.js';
import type { CallEdit } from '../store/admin-queries.js';
import { type Cut, cutBody, cutFormPair } from './cut-body.js';

/**
 * What the retention does to one stored call (docs/reference.md#retention), as plain functions of the text the stores
 * keep (the record, the raw request and each edit as JSON, a receipt's body as bytes), so both stores change a call
 * alike. Each returns undefined when the call holds nothing to remove: the store then writes nothing.
 */

/** A call's rows as the store reads them for the retention of a field. */
export interface StoredCallText {
  id: string;
  record: string;
  raw: string;
  dedupKey: string | null;
  edits: readonly { id: number; entry: string }[];
  receipts: readonly StoredBody[];
}

export interface StoredBody {
  id: number;
  contentType: string | null;
  rawBody: Uint8Array | null;
  query: string | null;
}

/** What to write back; each part absent is left as it is. */
export interface CallChanges {
  record?: string;
  raw?: string;
  dedupKey?: string;
  edits: { id: number; entry: string }[];
  receipts: { id: number; rawBody: Uint8Array | null; query: string | null }[];
}

/** The raw request with its body and query dropped, method and content type kept; undefined when already dropped. */
export function droppedRaw(rawText: string, at: string): string | undefined {
  const raw = parsed<RawRequest>(rawText);
  if (raw === undefined || raw.retention?.dropped !== undefined) return undefined;
  return JSON.stringify(dropped(raw, at));
}

function dropped(raw: RawRequest, at: string): RawRequest {
  return {
    method: raw.method,
    content_type: raw.content_type,
    query: {},
    body: '',
    retention: { ...raw.retention, dropped: at },
  };
}

/**
 * The call without `field`: gone from `data` and `extra`, from a problem's value as received (and its message, which
 * quotes it), from the edits' before and after, from the raw request (body cut, query pair gone; a body that cannot be
 * cut precisely dropped with the query) and from its receipts' bodies; its dedup key, when made of the field, replaced
 * by one made of the call's id (the value is gone, and with it the way to know a repeat). The raw request says which
 * fields were removed. Undefined when the call holds none of it.
 */
export function callWithout(field: string, call: StoredCallText, at: string): CallChanges | undefined {
  const changes: CallChanges = { edits: [], receipts: [] };
  const record = parsed<CallRecord>(call.record);
  const held = record !== undefined && recordWithout(field, record);
  if (record !== undefined) {
    let changed = held;
    if (keyUses(record.dedup_key, field) && record.dedup_key !== retainedKey(call.id)) {
      record.dedup_key = retainedKey(call.id);
      changed = true;
    }
    if (changed) changes.record = JSON.stringify(record);
  }
  // A voice platform's event names the fields its own way, nested and in its own spelling
  // (docs/reference.md#other-voice-platforms): it cannot be cut precisely, and goes whole once the call held the field
  // or the event names it.
  const cut: BodyCutter =
    record?.platform === undefined
      ? (contentType, text) => cutBody(field, contentType, text)
      : (_, text) => (text.trim() === '' ? 'unchanged' : held || text.includes(field) ? 'drop' : 'unchanged');
  if (keyUses(call.dedupKey, field) && call.dedupKey !== retainedKey(call.id)) changes.dedupKey = retainedKey(call.id);
  for (const edit of call.edits) {
    const entry = editWithout(field, edit.entry);
    if (entry !== undefined) changes.edits.push({ id: edit.id, entry });
  }
  for (const receipt of call.receipts) {
    const body = bodyWithout(field, receipt, cut);
    if (body !== undefined) changes.receipts.push({ id: receipt.id, ...body });
  }
  const raw = parsed<RawRequest>(call.raw);
  const rawCut = raw !== undefined && rawWithout(field, raw, at, cut);
  const none =
    !rawCut &&
    changes.record === undefined &&
    changes.dedupKey === undefined &&
    changes.edits.length === 0 &&
    changes.receipts.length === 0;
  if (none) return undefined;
  if (raw !== undefined) {
    const fields = raw.retention?.fields ?? [];
    if (!fields.includes(field)) raw.retention = { ...raw.retention, fields: [...fields, field] };
    changes.raw = JSON.stringify(raw);
  }
  return changes;
}

/** A dedup key made of the field (`field:value`, `a+field:v1|v2`, docs/reference.md#deduplication). */
function keyUses(key: string | null, field: string): boolean {
  if (key === null) return false;
  const colon = key.indexOf(':');
  return colon > 0 && key.slice(0, colon).split('+').includes(field);
}

/** Unique as the call's id is, so the (hook, dedup key) of every call stays unique. */
const retainedKey = (id: string) => `retention:${id}`;

function recordWithout(field: string, record: CallRecord): boolean {
  let changed = false;
  for (const part of [record.data, record.extra] as Record<string, unknown>[]) {
    if (part !== undefined && Object.hasOwn(part, field)) {
      delete part[field];
      changed = true;
    }
  }
  for (const problem of record.problems ?? []) {
    if (problem.field !== field || !('value' in problem)) continue;
    delete problem.value;
    problem.message = `${field}: its value was removed by retention`;
    changed = true;
  }
  return changed;
}

/** An edit entry with the field's before and after gone, marked as removed. */
export function editWithout(field: string, entryText: string): string | undefined {
  const entry = parsed<CallEdit>(entryText);
  const change = entry?.fields?.[field];
  if (entry === undefined || change === undefined || change.removed !== undefined) return undefined;
  entry.fields[field] = { removed: 'retention' };
  return JSON.stringify(entry);
}

/** Cuts the field out of the raw request in place; true when anything changed. */
/** How a call's bodies lose the field: cut-body.ts's rules, or a voice platform's event dropped whole. */
type BodyCutter = (contentType: string | null, text: string) => Cut;

function rawWithout(field: string, raw: RawRequest, at: string, cutter: BodyCutter): boolean {
  if (raw.retention?.dropped !== undefined) return false;
  const inQuery = raw.query !== undefined && Object.hasOwn(raw.query, field);
  const cut = cutter(raw.content_type, raw.body ?? '');
  if (cut === 'drop') {
    Object.assign(raw, dropped(raw, at));
    return true;
  }
  if (inQuery) delete raw.query[field];
  if (cut !== 'unchanged') raw.body = cut.text;
  return inQuery || cut !== 'unchanged';
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A receipt's body and query string without the field, both dropped when either cannot be cut; undefined: unchanged. */
function bodyWithout(
  field: string,
  receipt: StoredBody,
  cutter: BodyCutter,
): Pick<StoredBody, 'rawBody' | 'query'> | undefined {
  let text: string | undefined;
  try {
    text = receipt.rawBody === null ? undefined : utf8.decode(receipt.rawBody);
  } catch {
    return receipt.rawBody!.byteLength > 0 ? { rawBody: null, query: null } : undefined;
  }
  const body: Cut = text === undefined ? 'unchanged' : cutter(receipt.contentType, text);
  const query: Cut = receipt.query === null ? 'unchanged' : cutFormPair(field, receipt.query);
  if (body === 'drop' || query === 'drop') return { rawBody: null, query: null };
  if (body === 'unchanged' && query === 'unchanged') return undefined;
  return {
    rawBody: body === 'unchanged' ? receipt.rawBody : Buffer.from(body.text),
    query: query === 'unchanged' ? receipt.query : query.text,
  };
}

/** Stored JSON that is not what callhook writes (a row edited by hand) is left alone. */
function parsed<T>(text: string): T | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null ? (value as T) : undefined;
  } catch {
    return undefined;
  }
}
