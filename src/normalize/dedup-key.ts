/**
 * The key a record is deduplicated on (docs/reference.md#deduplication). The sender fires once per call with
 * no retries (spec 6.3 rule 6), but users replay, proxies retry, and two replicas may see the same
 * call, so equal calls must give equal keys on every machine and every run.
 */
import { hash } from 'node:crypto';
import type { Problem } from '../record.js';
import { isMissing } from './coerce.js';

/**
 * Orders strings by Unicode code point. The default sort compares UTF-16 code units, which puts
 * U+FF5E after U+1F600; code-point order is the same as the byte order of their UTF-8, so another
 * program (a PostgreSQL `COLLATE "C"` query, a Go or Rust client) can rebuild the same text.
 */
function byCodePoint(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.codePointAt(i) ?? 0;
    const y = b.codePointAt(i) ?? 0;
    if (x !== y) return x < y ? -1 : 1;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

function hasToJSON(value: object): value is { toJSON: () => unknown } {
  return typeof (value as { toJSON?: unknown }).toJSON === 'function';
}

/**
 * Like JSON.stringify (same escapes, numbers, toJSON, dropped undefined) but with object keys
 * sorted and no whitespace, in the spirit of RFC 8785. Only own enumerable properties are read, so
 * an own `__proto__` key is written like any other and nothing is taken from a prototype.
 * Returns undefined only where JSON.stringify would (undefined, a function or a symbol at the top).
 */
function write(value: unknown, parents: Set<object>): string | undefined {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'number':
      // Non-finite numbers become null, as JSON.stringify does.
      return JSON.stringify(value);
    case 'bigint':
      throw new TypeError('canonicalJson: a BigInt has no JSON form');
    case 'object':
      break;
    default:
      return undefined;
  }
  if (hasToJSON(value)) return write(value.toJSON(), parents);
  if (parents.has(value)) throw new TypeError('canonicalJson: the value is cyclic');
  parents.add(value);
  try {
    if (Array.isArray(value)) {
      return `[${value.map((item) => write(item, parents) ?? 'null').join(',')}]`;
    }
    const members: string[] = [];
    for (const [key, item] of Object.entries(value).sort(([a], [b]) => byCodePoint(a, b))) {
      const text = write(item, parents);
      if (text !== undefined) members.push(`${JSON.stringify(key)}:${text}`);
    }
    return `{${members.join(',')}}`;
  } finally {
    parents.delete(value);
  }
}

/**
 * The canonical JSON of a value. Most values are written by JSON.stringify over a copy whose keys were inserted in
 * canonical order: a third of the cost of writing each member by hand (`write`), which was the dearest step of a
 * call's intake (docs/performance.md). JSON.stringify follows insertion order except for array-index keys ("7"),
 * which it writes first in numeric order, and a copy cannot take an own `__proto__` key by assignment: a value
 * holding either, or an array with holes, is written by hand instead, so the text is the same either way.
 */
export function canonicalJson(value: unknown): string {
  try {
    // JSON.stringify(undefined) is undefined; a key needs text, and "null" is what an array would hold.
    return JSON.stringify(inCanonicalOrder(value, new Set())) ?? 'null';
  } catch (err) {
    if (err !== BY_HAND) throw err;
  }
  return canonicalJsonByHand(value);
}

/** The hand-written canonical JSON, member by member: the reference the fast path is tested against. */
export function canonicalJsonByHand(value: unknown): string {
  return write(value, new Set()) ?? 'null';
}

/** Thrown by inCanonicalOrder on what only `write` writes canonically. */
const BY_HAND = Symbol('by hand');
const INDEX_KEY = /^(?:0|[1-9]\d*)$/;
const SURROGATE = /[\uD800-\uDFFF]/;

/** A copy of the value, objects with their own keys added in code-point order; toJSON applied as write does. */
function inCanonicalOrder(value: unknown, parents: Set<object>): unknown {
  if (typeof value === 'bigint') throw new TypeError('canonicalJson: a BigInt has no JSON form');
  if (typeof value !== 'object' || value === null) return value;
  if (hasToJSON(value)) return inCanonicalOrder(value.toJSON(), parents);
  if (parents.has(value)) throw new TypeError('canonicalJson: the value is cyclic');
  parents.add(value);
  try {
    if (Array.isArray(value)) {
      const copy = new Array<unknown>(value.length);
      for (let i = 0; i < value.length; i++) {
        if (!(i in value)) throw BY_HAND;
        copy[i] = inCanonicalOrder(value[i], parents);
      }
      return copy;
    }
    const keys = Object.keys(value);
    let surrogates = false;
    for (const key of keys) {
      if (key === '__proto__' || INDEX_KEY.test(key)) throw BY_HAND;
      surrogates ||= SURROGATE.test(key);
    }
    // Without surrogates, UTF-16 order (sort's own) is code-point order.
    keys.sort(surrogates ? byCodePoint : undefined);
    const copy: Record<string, unknown> = {};
    for (const key of keys) copy[key] = inCanonicalOrder((value as Record<string, unknown>)[key], parents);
    return copy;
  } finally {
    parents.delete(value);
  }
}

/** The text a dedup field's value gives, or undefined when the value cannot identify a call. */
function keyText(value: unknown): string | undefined {
  if (isMissing(value)) return undefined;
  // A NUL cannot be stored in a PostgreSQL text column; such a value identifies nothing, so the next entry decides.
  if (typeof value === 'string') return value.includes('\u0000') ? undefined : value.trim();
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : undefined;
  if (typeof value === 'boolean') return String(value);
  return undefined;
}

function ownValue(source: Record<string, unknown>, field: string): unknown {
  return Object.hasOwn(source, field) ? source[field] : undefined;
}

/** A dedup entry: one field, or fields that must all be present (docs/reference.md#deduplication). */
export type DedupEntry = string | readonly string[];

/**
 * The sha256 (hex) of the canonical normalised `data` and `extra`: what a repeat is compared with, the key of a
 * call that has no key field, and the key a conflicting call is kept under (docs/reference.md#deduplication).
 *
 * A value that failed its type or format is in neither (it is a problem carrying the value as received), so the
 * hash also covers those values, under `invalid`, when there are any: two calls that differ only in what the AI
 * got wrong ("98123" against "45" for a phone number) are two calls, never one. A call with no such value hashes
 * exactly `{data, extra}`, as docs/reference.md#deduplication writes it.
 */
export function contentHash(
  data: Record<string, unknown>,
  extra: Record<string, unknown>,
  problems: readonly Problem[] = [],
): string {
  const invalid = problems.filter((p) => p.value !== undefined).map((p) => [p.field, p.value]);
  const content = invalid.length > 0 ? { data, extra, invalid: Object.fromEntries(invalid) } : { data, extra };
  return hash('sha256', canonicalJson(content), 'hex');
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The content hash of a stored record, as it was first received: for a call stored before the hash had a column
 * (store migration 4), computed when a repeat first meets it. Whatever the stored JSON holds, it gives a hash.
 */
export function recordContentHash(record: unknown): string {
  const r = isObject(record) ? record : {};
  return contentHash(
    isObject(r.data) ? r.data : {},
    isObject(r.extra) ? r.extra : {},
    Array.isArray(r.problems) ? (r.problems as Problem[]).filter(isObject) : [],
  );
}

/**
 * In a composite key the values are joined with `|`; a `|` or `\` inside a value is escaped with `\`, so two
 * different pairs of values can never give the same key ("a|b" + "c" against "a" + "b|c").
 */
const escapePart = (text: string) => text.replace(/[\\|]/g, (c) => `\\${c}`);

/** The key the entry gives: `"<field>:<value>"`, or `"<f1>+<f2>:<v1>|<v2>"`; undefined when a field is missing. */
function entryKey(
  entry: DedupEntry,
  data: Record<string, unknown>,
  extra: Record<string, unknown>,
): string | undefined {
  const fields = typeof entry === 'string' ? [entry] : entry;
  const values: string[] = [];
  for (const field of fields) {
    const text = keyText(ownValue(data, field)) ?? keyText(ownValue(extra, field));
    if (text === undefined) return undefined;
    values.push(text);
  }
  return typeof entry === 'string'
    ? `${entry}:${values[0]}`
    : `${fields.join('+')}:${values.map(escapePart).join('|')}`;
}

export interface DedupKeyOptions {
  /**
   * No declared parameter has a value (an empty body, every value `""`): with no key field present either,
   * there is no way to tell a repeat from another call, so the call has no key and is never a duplicate.
   */
  empty?: boolean;
  /** The content hash, when the caller has it already. */
  hash?: string;
}

/**
 * docs/reference.md#deduplication: the first entry whose fields are all present (looked up in the normalised data, then
 * in the undeclared extra fields) gives the key; with none present, `"sha256:<hex>"` of the content, so an identical
 * body sent twice is still one record; and null for a call with nothing in it.
 */
export function dedupKey(
  entries: readonly DedupEntry[],
  data: Record<string, unknown>,
  extra: Record<string, unknown>,
  { empty = false, hash }: DedupKeyOptions = {},
): string | null {
  for (const entry of entries) {
    const key = entryKey(entry, data, extra);
    if (key !== undefined) return key;
  }
  return empty ? null : `sha256:${hash ?? contentHash(data, extra)}`;
}
