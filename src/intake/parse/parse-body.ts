import { MIMEType } from 'node:util';
import busboy from 'busboy';
import { CallhookError } from '../../errors.js';
import { type BodyLimits, DEFAULT_BODY_LIMITS } from './body-limits.js';
import { readPlainMultipart } from './multipart-plain.js';
import { decodeUtf8, groupFields, parseUrlEncoded, quote } from './parse-query.js';

/**
 * The body of a webhook as plain fields, read by its Content-Type (docs/reference.md#receiving, spec section 6.3 rule
 * 2): application/json, application/x-www-form-urlencoded or multipart/form-data (RFC 7578). Every failure is a
 * CallhookError: 400 unreadable, 413 over a limit, 415 a type, charset or file part refused.
 */

export type Encoding = 'json' | 'form' | 'multipart' | 'none';
export interface ParsedBody {
  encoding: Encoding;
  fields: Record<string, unknown>;
  /**
   * The body as text, when it was read as UTF-8 whole (JSON, form): the raw request keeps it without a second decode.
   */
  text?: string;
}
export interface FileField {
  filename: string | null;
  content_type: string;
  size: number;
  base64: string;
}
export interface ParseBodyOptions {
  allowFiles?: boolean;
  limits?: BodyLimits;
  /** Read every multipart body with busboy, skipping the plain-shape reader: for the tests that compare the two. */
  busboyOnly?: boolean;
}

// RFC 8259 defines no charset parameter, but senders add one; anything but UTF-8 (or its ASCII subset) is refused.
const UTF8_CHARSETS = new Set(['utf-8', 'utf8', 'us-ascii']);

export async function parseBody(
  body: Uint8Array,
  contentType: string | undefined,
  options: ParseBodyOptions = {},
): Promise<ParsedBody> {
  try {
    return await parse(body, contentType, options);
  } catch (error) {
    if (error instanceof CallhookError) throw error;
    throw new CallhookError('BAD_BODY', String(error), { cause: error });
  }
}

async function parse(body: Uint8Array, contentType: string | undefined, opts: ParseBodyOptions): Promise<ParsedBody> {
  // GET and DELETE carry no body (spec section 6.3 rule 3), nor does a hook with "Enable Body" off.
  if (body.every((byte) => byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d)) {
    return { encoding: 'none', fields: {} };
  }
  if (!contentType?.trim()) return sniffJson(body);

  const mime = readMediaType(contentType);
  // RFC 6839 section 3.1: any `+json` subtype is JSON.
  const isJson = mime.essence === 'application/json' || (mime.type === 'application' && mime.subtype.endsWith('+json'));
  const isForm = mime.essence === 'application/x-www-form-urlencoded';
  if (!isJson && !isForm && mime.essence !== 'multipart/form-data') {
    throw new CallhookError('UNSUPPORTED_MEDIA_TYPE', mime.essence);
  }
  const charset = mime.params.get('charset');
  if (charset !== null && !UTF8_CHARSETS.has(charset.toLowerCase())) {
    throw new CallhookError('UNSUPPORTED_MEDIA_TYPE', `charset ${quote(charset)} (send utf-8)`);
  }

  if (isJson) {
    const text = decodeUtf8(body, 'BAD_BODY');
    return { encoding: 'json', fields: asObject(parseJson(text)), text };
  }
  const limits = opts.limits ?? DEFAULT_BODY_LIMITS;
  if (isForm) {
    const text = decodeUtf8(body, 'BAD_BODY');
    return { encoding: 'form', fields: parseUrlEncoded(text, 'BAD_BODY', limits), text };
  }
  return {
    encoding: 'multipart',
    fields: await parseMultipart(body, mime, opts.allowFiles ?? false, limits, opts.busboyOnly ?? false),
  };
}

/**
 * A sender sends the same Content-Type with every call: each is parsed once and kept, a few dozen at most (a
 * multipart boundary may change per request, and the map is then emptied now and then). Never changed once made.
 */
const mediaTypes = new Map<string, MIMEType>();
const MEDIA_TYPES_KEPT = 64;

function readMediaType(contentType: string): MIMEType {
  const known = mediaTypes.get(contentType);
  if (known) return known;
  try {
    // Lower-cases type and parameter names and unquotes values (RFC 9110 section 8.3.1); a quoted boundary included.
    const mime = new MIMEType(contentType);
    if (mediaTypes.size >= MEDIA_TYPES_KEPT) mediaTypes.clear();
    mediaTypes.set(contentType, mime);
    return mime;
  } catch (error) {
    const detail = `unreadable Content-Type ${quote(contentType)}`;
    throw new CallhookError('UNSUPPORTED_MEDIA_TYPE', detail, { cause: error });
  }
}

// Without a Content-Type the sender's default applies: a raw JSON object (spec section 6.3 rule 2).
function sniffJson(body: Uint8Array): ParsedBody {
  let value: unknown;
  try {
    value = parseJson(decodeUtf8(body, 'BAD_BODY'));
  } catch (error) {
    throw new CallhookError('UNSUPPORTED_MEDIA_TYPE', 'no Content-Type, and the body is not JSON', { cause: error });
  }
  return { encoding: 'json', fields: asObject(value) };
}

/**
 * The sender's bodies are flat; a body nested deeper than this is refused before it is parsed, since every later
 * step that walks a value (the dedup hash, the store's JSON) would otherwise recurse as deep as a client likes.
 */
export const MAX_JSON_DEPTH = 64;

function parseJson(text: string): unknown {
  // A text with no more opening brackets than the limit cannot nest deeper: a call's body has one, and is not walked.
  const depth = openingBrackets(text) <= MAX_JSON_DEPTH ? 0 : nestingDepth(text);
  if (depth > MAX_JSON_DEPTH)
    throw new CallhookError('BAD_BODY', `JSON nested ${depth} levels deep (at most ${MAX_JSON_DEPTH})`);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CallhookError('BAD_BODY', `broken JSON: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * How many `{` and `[` the text holds, strings included, counted up to one past `MAX_JSON_DEPTH`: an upper bound of its
 * nesting depth that `indexOf` finds about 30 times faster than nestingDepth walks the text (docs/performance.md).
 */
function openingBrackets(text: string): number {
  let count = 0;
  for (const bracket of ['{', '[']) {
    for (let at = text.indexOf(bracket); at !== -1 && count <= MAX_JSON_DEPTH; at = text.indexOf(bracket, at + 1))
      count++;
  }
  return count;
}

/** The deepest bracket nesting outside strings: one pass, no recursion, stops counting past the limit. */
function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > deepest && (deepest = depth) > MAX_JSON_DEPTH) return deepest;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}

function asObject(value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CallhookError('BAD_BODY', 'JSON body must be an object');
  }
  return value as Record<string, unknown>;
}

/** One part as busboy read it; `file` is set for a part with a filename or of type application/octet-stream. */
interface Part {
  name: string;
  value: string;
  file?: { filename: string | undefined; type: string; chunks: Buffer[] };
}

/**
 * busboy decodes a field with the charset its part declares (RFC 7578 section 4.4) and leniently, turning bad
 * bytes into U+FFFD. A part that declares none gets `defCharset`: with latin1 each byte becomes one character,
 * so the exact bytes can be checked as strict UTF-8. To tell the two apart, a form with any non-ASCII text is
 * read a second time with utf8 as the default: only what the part left to the default reads differently.
 */
async function parseMultipart(
  body: Uint8Array,
  mime: MIMEType,
  allowFiles: boolean,
  limits: BodyLimits,
  busboyOnly: boolean,
): Promise<Record<string, unknown>> {
  const boundary = mime.params.get('boundary');
  if (!boundary) {
    throw new CallhookError('BAD_BODY', 'multipart/form-data without a boundary parameter (RFC 7578 section 4.1)');
  }
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  // The sender's own shape is read directly; anything else goes to busboy (see multipart-plain.ts).
  const plain = busboyOnly ? undefined : readPlainMultipart(bytes, boundary, limits);
  if (plain) return groupFields(plain);
  const read = (charset: string) => readParts(bytes, mime.toString(), charset, allowFiles, limits);
  const asBytes = await read('latin1');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the range is all of ASCII, controls included.
  const nonAscii = (text: string | undefined) => text !== undefined && /[^\x00-\x7f]/.test(text);
  const needsSecondRead = asBytes.some((p) => nonAscii(p.name) || nonAscii(p.value) || nonAscii(p.file?.filename));
  const asUtf8 = needsSecondRead ? await read('utf8') : asBytes;

  return groupFields<string | FileField>(
    asBytes.map((part, index) => {
      const other = asUtf8[index] ?? part;
      const name = strictText(part.name, other.name, 'a part name');
      if (!part.file) return [name, strictText(part.value, other.value, `field ${quote(name)}`)] as const;
      const { filename, type, chunks } = part.file;
      const content = Buffer.concat(chunks);
      const file: FileField = {
        filename: filename === undefined ? null : strictText(filename, other.file?.filename ?? filename, 'a file name'),
        content_type: type,
        size: content.length,
        base64: content.toString('base64'),
      };
      return [name, file] as const;
    }),
  );
}

function strictText(asBytes: string, asUtf8: string, what: string): string {
  if (asBytes !== asUtf8) return decodeUtf8(Buffer.from(asBytes, 'latin1'), 'BAD_BODY', what);
  // Same in both reads: ASCII, or text in a charset the part declared, where busboy may have put U+FFFD.
  if (asBytes.includes('\uFFFD')) throw new CallhookError('BAD_BODY', `invalid UTF-8 in ${what}`);
  return asBytes;
}

function readParts(
  body: Buffer,
  contentType: string,
  charset: string,
  allowFiles: boolean,
  limits: BodyLimits,
): Promise<Part[]> {
  return new Promise((resolve, reject) => {
    const parts: Part[] = [];
    let settled = false;
    const fail = (error: CallhookError) => {
      if (settled) return;
      settled = true;
      reject(error);
    };
    const broken = (error: unknown) =>
      fail(new CallhookError('BAD_BODY', `broken multipart: ${(error as Error).message}`, { cause: error }));
    const tooLarge = (detail: string) => () => fail(new CallhookError('BODY_TOO_LARGE', detail));

    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: { 'content-type': contentType },
        // busboy flags a value of exactly fieldSize bytes as truncated and signals partsLimit after exactly
        // `parts` parts, so one more is asked of it: the limits then mean "more than", as for forms.
        limits: {
          fields: limits.fields,
          fieldSize: limits.fieldSize + 1,
          parts: limits.parts + 1,
          files: allowFiles ? limits.parts : Infinity,
          fileSize: body.byteLength,
        },
        defCharset: charset,
        defParamCharset: charset,
      });
    } catch (error) {
      broken(error);
      return;
    }

    parser.on('field', (name: string | undefined, value: string | undefined, info) => {
      // RFC 7578 section 4.2: every part names its field.
      if (name === undefined) return fail(new CallhookError('BAD_BODY', 'a part has no name (RFC 7578 section 4.2)'));
      if (info.valueTruncated) {
        const detail = `field ${quote(name)} is longer than ${limits.fieldSize} bytes (limit fieldSize)`;
        return fail(new CallhookError('BODY_TOO_LARGE', detail));
      }
      // busboy gives undefined for a charset it cannot decode.
      if (value === undefined) {
        const detail = `part ${quote(name)} declares a charset other than utf-8`;
        return fail(new CallhookError('UNSUPPORTED_MEDIA_TYPE', detail));
      }
      parts.push({ name, value });
    });
    parser.on('file', (name: string | undefined, stream, info) => {
      // A stream left unread would hold busboy back for ever: it is always drained, and its errors always heard.
      stream.on('error', broken);
      if (!allowFiles || name === undefined) {
        stream.resume();
        if (name === undefined) return fail(new CallhookError('BAD_BODY', 'a part has no name (RFC 7578 section 4.2)'));
        return fail(new CallhookError('FILE_PART', `part ${quote(name)} is a file`));
      }
      const file = { filename: info.filename, type: info.mimeType, chunks: [] as Buffer[] };
      parts.push({ name, value: '', file });
      stream.on('data', (chunk: Buffer) => file.chunks.push(chunk));
      stream.on('limit', tooLarge(`file ${quote(name)} is larger than the body limit`));
    });
    parser.on('fieldsLimit', tooLarge(`more than ${limits.fields} fields (limit fields)`));
    parser.on('partsLimit', tooLarge(`more than ${limits.parts} parts (limit parts)`));
    parser.on('filesLimit', tooLarge(`more than ${limits.parts} files (limit parts)`));
    parser.on('error', broken);
    // 'close' follows 'finish' and every 'error'; by then each file stream has ended.
    parser.on('close', () => {
      if (settled) return;
      settled = true;
      resolve(parts);
    });

    try {
      parser.end(body);
    } catch (error) {
      broken(error);
    }
  });
}
