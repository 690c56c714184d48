import { CallhookError, type ErrorCode } from '../errors.js';

/**
 * application/x-www-form-urlencoded (WHATWG URL, section 5.1), shared by query strings and form bodies, plus the
 * strict UTF-8 and field-grouping rules that parse-body.ts reuses for JSON and multipart.
 *
 * Stricter than the WHATWG parser on purpose: it replaces a bad escape or a byte that is not UTF-8 with U+FFFD,
 * which would store a mangled name as if the sender had meant it. Here such input is refused (CONTRACT section 2).
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
 * value is decoded here: decodeURIComponent throws URIError for a malformed escape and for escaped bytes that are
 * not UTF-8. `+` means space in this format only, hence it is replaced first (`%2B` still decodes to `+`).
 */
export function decodeComponent(raw: string, code: ErrorCode): string {
  try {
    return decodeURIComponent(raw.replaceAll('+', ' '));
  } catch (error) {
    throw new CallhookError(code, `invalid percent-encoding in ${quote(raw)}`, { cause: error });
  }
}

/**
 * A repeated key keeps every value, in order, as an array; nothing the sender sent is dropped.
 * Object.fromEntries defines own data properties, so `__proto__` or `constructor` from the wire stay plain keys
 * and Object.prototype is never touched, which `obj[key] = value` would not guarantee.
 */
export function groupFields<V>(entries: Iterable<readonly [string, V]>): Record<string, V | V[]> {
  const grouped = new Map<string, V[]>();
  for (const [key, value] of entries) {
    const values = grouped.get(key);
    if (values) values.push(value);
    else grouped.set(key, [value]);
  }
  return Object.fromEntries(
    Array.from(grouped, ([key, values]) => [key, values.length > 1 ? values : (values[0] as V)]),
  );
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
