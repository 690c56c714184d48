/**
 * The key a record is deduplicated on (contract section 4). The sender fires once per call with
 * no retries (spec 6.3 rule 6), but users replay, proxies retry, and two replicas may see the same
 * call, so equal calls must give equal keys on every machine and every run.
 */
import { createHash } from 'node:crypto';
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

export function canonicalJson(value: unknown): string {
  // JSON.stringify(undefined) is undefined; a key needs text, and "null" is what an array would hold.
  return write(value, new Set()) ?? 'null';
}

/** The text a dedup field's value gives, or undefined when the value cannot identify a call. */
function keyText(value: unknown): string | undefined {
  if (isMissing(value)) return undefined;
  // A NUL cannot be stored in a PostgreSQL text column; such a value identifies nothing, so the next field decides.
  if (typeof value === 'string') return value.includes('\u0000') ? undefined : value.trim();
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : undefined;
  if (typeof value === 'boolean') return String(value);
  return undefined;
}

function ownValue(source: Record<string, unknown>, field: string): unknown {
  return Object.hasOwn(source, field) ? source[field] : undefined;
}

/**
 * `"<field>:<value>"` from the first of `fields` present, looked up in the normalised data, then in
 * the undeclared extra fields; else `"sha256:<hex>"` over the canonical data and extra, so an
 * identical body sent twice is still one record.
 */
export function dedupKey(
  fields: readonly string[],
  data: Record<string, unknown>,
  extra: Record<string, unknown>,
): string {
  for (const field of fields) {
    const text = keyText(ownValue(data, field)) ?? keyText(ownValue(extra, field));
    if (text !== undefined) return `${field}:${text}`;
  }
  return `sha256:${createHash('sha256').update(canonicalJson({ data, extra })).digest('hex')}`;
}
