import { CallhookError, type ErrorCode } from '../../errors.js';

/**
 * application/x-www-form-urlencoded (WHATWG URL, section 5.1), shared by query strings and form bodies, plus the
 * strict UTF-8 and field-grouping rules that parse-body.ts reuses for JSON and multipart.
 *
 * Stricter than the WHATWG parser on purpose: it replaces a bad escape or a byte that is not UTF-8 with U+FFFD, which
 * would store a mangled name as if the sender had meant it. Here such input is refused (docs/reference.md#receiving).
 */

export interface UrlEncodedLimits {
  fields: number;
  fieldSize: number;
}

// fatal: a byte that is not UTF-8 throws instead of becoming U+FFFD. ignoreBOM stays false, so a leading BOM
// is dropped (RFC 8259 section 8.1 lets a JSON parser ignore it; a form key should not start with one either).
const utf8 = new TextDecoder('utf-8', { fatal: true });

export function decodeUtf8(bytes: Uint8Array, code: ErrorCode, where?: string): string {
  try {
    return utf8.decode(bytes);
  } catch (error) {
    throw new CallhookError(code, where ? `invalid UTF-8 in ${where}` : 'invalid UTF-8', { cause: error });
  }
}

/** Quotes a name or fragment for an error message without echoing a megabyte of it back. */
export function quote(text: string): string {
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
}

/**
 * URLSearchParams would silently insert U+FFFD for `%FF` or a cut sequence such as `%E2%82`, so each name and
 * value is decoded here, strictly: a malformed escape, or escaped bytes that are not UTF-8, are refused, as
 * decodeURIComponent refuses them. `+` means space in this format only (`%2B` still decodes to `+`).
 *
 * The bytes are decoded by hand into a buffer and read by the strict UTF-8 decoder: decodeURIComponent gives the
 * same text (a property test holds them together) but cost two thirds of a form body's parse, 20 µs of the
 * recommended fields' 48 (docs/performance.md). Text is kept in UTF-8 as it arrived, so an escaped byte and the
 * characters around it form one sequence only where decodeURIComponent would read them as one too: a character
 * that arrived unescaped is a whole sequence of its own, and an escaped lead byte before it is refused by both.
 */
export function decodeComponent(raw: string, code: ErrorCode): string {
  if (!raw.includes('%')) return raw.includes('+') ? raw.replaceAll('+', ' ') : raw;
  // A lone surrogate has no UTF-8: decodeURIComponent passes it through, and so it is read that way.
  if (LONE_SURROGATE.test(raw)) return byDecodeURIComponent(raw, code);
  const text = Buffer.from(raw, 'utf8');
  const bytes = Buffer.allocUnsafe(text.length);
  let length = 0;
  for (let i = 0; i < text.length; i++) {
    const byte = text[i]!;
    if (byte === 0x25) {
      const high = hexValue(text[i + 1]);
      const low = hexValue(text[i + 2]);
      if (high < 0 || low < 0) throw badEscape(raw, code);
      bytes[length++] = high * 16 + low;
      i += 2;
    } else bytes[length++] = byte === 0x2b ? 0x20 : byte;
  }
  try {
    return utf8.decode(bytes.subarray(0, length));
  } catch (error) {
    throw badEscape(raw, code, error);
  }
}

/** With the u flag a pair is one code point, so only a surrogate standing alone matches. */
const LONE_SURROGATE = /\p{Cs}/u;

/** The reference decoder, for the text the buffer cannot hold. */
export function byDecodeURIComponent(raw: string, code: ErrorCode): string {
  try {
    return decodeURIComponent(raw.replaceAll('+', ' '));
  } catch (error) {
    throw badEscape(raw, code, error);
  }
}

const badEscape = (raw: string, code: ErrorCode, cause?: unknown) =>
  new CallhookError(code, `invalid percent-encoding in ${quote(raw)}`, { cause });

/** A hex digit's value; -1 for anything else, the end of the text included. */
function hexValue(byte: number | undefined): number {
  if (byte === undefined) return -1;
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  const lower = byte | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x57 : -1;
}

/**
 * A repeated key keeps every value, in order, as an array; nothing the sender sent is dropped. An own `__proto__`
 * from the wire is defined as a plain data property, so Object.prototype and the object's own prototype are never
 * touched, which `fields[key] = value` would not guarantee for that one key.
 */
export function groupFields<V>(entries: Iterable<readonly [string, V]>): Record<string, V | V[]> {
  const fields: Record<string, V | V[]> = {};
  let repeated: Set<string> | undefined;
  for (const [key, value] of entries) {
    if (!Object.hasOwn(fields, key)) {
      if (key === '__proto__')
        Object.defineProperty(fields, key, { value, enumerable: true, writable: true, configurable: true });
      else fields[key] = value;
    } else if (repeated?.has(key)) (fields[key] as V[]).push(value);
    else {
      (repeated ??= new Set()).add(key);
      // An own data property by now, `__proto__` included: assigning to it sets the property, not the prototype.
      fields[key] = [fields[key] as V, value];
    }
  }
  return fields;
}

/**
 * Splits on `&`, skips empty pairs, splits each pair at its first `=` (a pair without one is a key with value
 * ''). `limits` applies to bodies; a query string is already bounded by the HTTP server's header size.
 */
export function parseUrlEncoded(
  text: string,
  code: ErrorCode,
  limits?: UrlEncodedLimits,
): Record<string, string | string[]> {
  const pairs = text.split('&').filter((pair) => pair !== '');
  if (limits && pairs.length > limits.fields) {
    throw new CallhookError('BODY_TOO_LARGE', `more than ${limits.fields} fields (limit fields)`);
  }
  return groupFields(
    pairs.map((pair) => {
      const eq = pair.indexOf('=');
      const name = decodeComponent(eq === -1 ? pair : pair.slice(0, eq), code);
      const value = eq === -1 ? '' : decodeComponent(pair.slice(eq + 1), code);
      if (limits && Buffer.byteLength(value) > limits.fieldSize) {
        throw new CallhookError(
          'BODY_TOO_LARGE',
          `field ${quote(name)} is longer than ${limits.fieldSize} bytes (limit fieldSize)`,
        );
      }
      return [name, value] as const;
    }),
  );
}

/** The query string of a request, with or without its leading `?`. Errors are BAD_QUERY (400). */
export function parseQuery(search: string): Record<string, string | string[]> {
  return parseUrlEncoded(search.startsWith('?') ? search.slice(1) : search, 'BAD_QUERY');
}
