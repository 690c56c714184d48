import type { BodyLimits } from './parse-body.js';

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

const CRLF_CRLF = Buffer.from('\r\n\r\n');
/** RFC 2046 section 5.1.1: 1 to 70 characters from a set of printable ASCII. */
const BOUNDARY = /^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/;
/** A name of visible characters, spaces and UTF-8 bytes: a control character is a malformed header to busboy. */
const DISPOSITION = /^content-disposition:[ \t]*form-data;[ \t]*name="([^"\\\x00-\x1f\x7f]+)"[ \t]*$/i;
const utf8 = new TextDecoder('utf-8', { fatal: true });

export function readPlainMultipart(body: Buffer, boundary: string, limits: BodyLimits): [string, string][] | undefined {
  if (!BOUNDARY.test(boundary)) return undefined;
  const first = Buffer.from(`--${boundary}`, 'latin1');
  const delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
  if (body.indexOf(first) !== 0) return undefined;
  const fields: [string, string][] = [];
  const most = Math.min(limits.fields, limits.parts);
  for (let at = first.length; ; ) {
    // After a delimiter, "--" closes the form (what follows is the epilogue, ignored); CRLF opens a part.
    if (body[at] === 0x2d && body[at + 1] === 0x2d) return fields;
    if (body[at] !== 0x0d || body[at + 1] !== 0x0a || fields.length >= most) return undefined;
    const headersEnd = body.indexOf(CRLF_CRLF, at + 2);
    if (headersEnd < 0) return undefined;
    const header = DISPOSITION.exec(body.toString('latin1', at + 2, headersEnd));
    const valueStart = headersEnd + CRLF_CRLF.length;
    const valueEnd = body.indexOf(delimiter, valueStart);
    if (!header || valueEnd < 0 || valueEnd - valueStart > limits.fieldSize) return undefined;
    const name = text(Buffer.from(header[1]!, 'latin1'));
    const value = text(body.subarray(valueStart, valueEnd));
    if (name === undefined || value === undefined) return undefined;
    fields.push([name, value]);
    at = valueEnd + delimiter.length;
  }
}

function text(bytes: Uint8Array): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}
