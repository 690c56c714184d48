/**
 * Coercions from what the sender puts on the wire to the declared data type (docs/reference.md#normalising).
 * Form and multipart bodies carry every value as text, and the AI often writes numbers and
 * booleans as strings even in JSON, so each coercion accepts both the typed value and its text.
 */
import { toAmount } from './amount.js';

/**
 * JSON number grammar (RFC 8259 section 6) with surrounding spaces. `Number()` alone would also
 * accept "0x10", "Infinity", "1_000"-style surprises and "" (as 0), which a form value must not become.
 */
const JSON_NUMBER = /^\s*-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?\s*$/;

/** A JSON number, its text, or an amount as callers write it (`5,00,000`, `₹499`, `2 lakh`: amount.ts). */
export function toNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v !== 'string') return undefined;
  if (!JSON_NUMBER.test(v)) return toAmount(v);
  const n = Number(v);
  // The grammar allows "1e999", which overflows to Infinity: no JSON consumer can hold it.
  return Number.isFinite(n) ? n : undefined;
}

const TRUE_WORDS: ReadonlySet<string> = new Set(['true', '1', 'yes']);
const FALSE_WORDS: ReadonlySet<string> = new Set(['false', '0', 'no']);

export function toBoolean(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v === 1 ? true : v === 0 ? false : undefined;
  if (typeof v !== 'string') return undefined;
  const word = v.trim().toLowerCase();
  if (TRUE_WORDS.has(word)) return true;
  if (FALSE_WORDS.has(word)) return false;
  return undefined;
}

/**
 * Text of a string parameter. A JSON number or boolean is accepted as its text because the AI
 * may send `560001` for a pincode declared as a string; structured values are not text.
 */
export function toText(v: unknown): string | undefined {
  if (typeof v === 'string') return v.trim();
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : undefined;
  if (typeof v === 'boolean') return String(v);
  return undefined;
}

/** The sender sends "" for what the AI could not find (spec 6.3 rule 4); JSON null means the same. */
export function isMissing(v: unknown): boolean {
  return v === undefined || v === null || (typeof v === 'string' && v.trim() === '');
}
