import type { BodyLimits } from './body-limits.js';

/**
 * The shape the calling service sends multipart/form-data in (spec 6.3 rule 2: "one form field per parameter"),
 * read straight from the body already in memory: each part a single `Content-Disposition: form-data; name="…"`
 * header and UTF-8 text, the form closed by its final delimiter (RFC 7578 section 4, RFC 2046 section 5.1.1).
 *
 * Written by hand for speed, not for coverage: busboy is a streaming parser, and for a body already read its
 * machinery costs about 100 µs for the 18 fields of the recommended table, fifteen times JSON.parse of the same
 * data (the bench measured multipart at 0.63 × JSON). Anything else — a preamble, padding after a delimiter,
 * another header, a filename, a quote or backslash in a name, bytes that are not UTF-8, a limit reached, a form
 * without its final delimiter — gives undefined, and busboy reads the body as before, with its own errors.
 */

/** RFC 2046 section 5.1.1: 1 to 70 characters from a set of printable ASCII. */
const BOUNDARY = /^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/;
/** A name of visible characters, spaces and UTF-8 text: a control character is a malformed header to busboy. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what the pattern refuses.
const DISPOSITION = /^content-disposition:[ \t]*form-data;[ \t]*name="([^"\\\x00-\x1f\x7f]+)"[ \t]*$/i;
/** fatal: a body that is not UTF-8 anywhere is left to busboy, which says which part. ignoreBOM: kept as text. */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The body is decoded once and read as text: the delimiters and headers are ASCII, so their places in the text are
 * those of the bytes, and each value is UTF-8 text already (reading the parts as bytes, each decoded alone, cost
 * three times as much: docs/performance.md).
 */
export function readPlainMultipart(body: Buffer, boundary: string, limits: BodyLimits): [string, string][] | undefined {
  if (!BOUNDARY.test(boundary)) return undefined;
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    return undefined;
  }
  const first = `--${boundary}`;
  const delimiter = `\r\n--${boundary}`;
  if (!text.startsWith(first)) return undefined;
  const fields: [string, string][] = [];
  const most = Math.min(limits.fields, limits.parts);
  for (let at = first.length; ; ) {
    // After a delimiter, "--" closes the form (what follows is the epilogue, ignored); CRLF opens a part.
    if (text.startsWith('--', at)) return fields;
    if (!text.startsWith('\r\n', at) || fields.length >= most) return undefined;
    const headersEnd = text.indexOf('\r\n\r\n', at + 2);
    if (headersEnd < 0) return undefined;
    const header = DISPOSITION.exec(text.slice(at + 2, headersEnd));
    const valueStart = headersEnd + 4;
    const valueEnd = text.indexOf(delimiter, valueStart);
    if (!header || valueEnd < 0) return undefined;
    const value = text.slice(valueStart, valueEnd);
    // The limit is in bytes; a UTF-16 unit is at most 3 of them, so most values need no count.
    if (value.length * 3 > limits.fieldSize && Buffer.byteLength(value) > limits.fieldSize) return undefined;
    fields.push([header[1]!, value]);
    at = valueEnd + delimiter.length;
  }
}
