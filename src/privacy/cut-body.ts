import { MIMEType } from 'node:util';
import { decodeComponent } from '../intake/parse/parse-query.js';

/**
 * A field cut out of a request body as received (docs/reference.md#retention): a JSON object without its member, a
 * form body or query string without its pairs, every other byte as it was. A body that cannot be cut precisely (a
 * multipart body, text that is not the JSON or form its type says) is dropped whole rather than kept with the field.
 */

/** `unchanged`: the field is not in the body; `drop`: it may be, and cannot be cut out precisely. */
export type Cut = { text: string } | 'unchanged' | 'drop';

/** Cuts `field` out of a body of this Content-Type (none: JSON, the sender's default, spec section 6.3 rule 2). */
export function cutBody(field: string, contentType: string | null, body: string): Cut {
  if (body.trim() === '') return 'unchanged';
  const kind = encodingOf(contentType);
  if (kind === 'json') return cutJsonMember(field, body);
  if (kind === 'form') return cutFormPair(field, body);
  // A multipart part's name is written as it was sent, so a body without the name anywhere holds no such part.
  return body.includes(field) ? 'drop' : 'unchanged';
}

function encodingOf(contentType: string | null): 'json' | 'form' | 'other' {
  if (contentType === null || contentType.trim() === '') return 'json';
  let mime: MIMEType;
  try {
    mime = new MIMEType(contentType);
  } catch {
    return 'other';
  }
  // As the intake reads it (intake/parse/parse-body.ts): RFC 6839 section 3.1, any `+json` subtype is JSON.
  if (mime.essence === 'application/json' || (mime.type === 'application' && mime.subtype.endsWith('+json')))
    return 'json';
  return mime.essence === 'application/x-www-form-urlencoded' ? 'form' : 'other';
}

/**
 * `field=…` pairs (any spelling of the name: `recording%5Furl` too) cut out of a form body or a query string (with its
 * `?`), the other pairs as they were written. A name that cannot be decoded may be the field: the text is dropped.
 */
export function cutFormPair(field: string, text: string): Cut {
  const question = text.startsWith('?') ? '?' : '';
  const pairs = text.slice(question.length).split('&');
  const kept: string[] = [];
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    let name: string;
    try {
      name = decodeComponent(eq === -1 ? pair : pair.slice(0, eq), 'BAD_BODY');
    } catch {
      return 'drop';
    }
    if (pair === '' || name !== field) kept.push(pair);
  }
  if (kept.length === pairs.length) return 'unchanged';
  const rest = kept.join('&');
  return { text: rest === '' ? '' : `${question}${rest}` };
}

interface Member {
  key: string;
  start: number;
  end: number;
}

/**
 * Every top-level member named `field` cut out of a JSON object, with the separator before or after it; the other
 * members and the whitespace between them stay as written (a number is never read and written again, so
 * 12345678901234567890 stays exact). Not one JSON object: dropped.
 */
export function cutJsonMember(field: string, text: string): Cut {
  if (!isJson(text)) return 'drop';
  const object = membersOf(text);
  if (object === undefined) return 'drop';
  const { members, open, close } = object;
  if (!members.some((m) => m.key === field)) return 'unchanged';
  let out = '';
  let last: Member | undefined;
  for (const [i, member] of members.entries()) {
    if (member.key === field) continue;
    // The separator written before this member in the body (after the one before it), or none for the first kept.
    out += last === undefined ? '' : text.slice(members[i - 1]!.end, member.start);
    out += text.slice(member.start, member.end);
    last = member;
  }
  const first = members[0]!;
  const final = members.at(-1)!;
  const cut = `${text.slice(0, last === undefined ? open + 1 : first.start)}${out}${text.slice(last === undefined ? close : final.end)}`;
  return isJson(cut) ? { text: cut } : 'drop';
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** The top-level members of a JSON object with their spans, and where its braces are; undefined if it is not one. */
function membersOf(text: string): { members: Member[]; open: number; close: number } | undefined {
  const members: Member[] = [];
  const open = skipSpace(text, 0);
  if (text[open] !== '{') return undefined;
  let i = skipSpace(text, open + 1);
  if (text[i] === '}') return skipSpace(text, i + 1) === text.length ? { members, open, close: i } : undefined;
  for (;;) {
    const start = i;
    const keyEnd = text[i] === '"' ? stringEnd(text, i) : -1;
    if (keyEnd < 0) return undefined;
    let key: string;
    try {
      key = JSON.parse(text.slice(start, keyEnd)) as string;
    } catch {
      return undefined;
    }
    i = skipSpace(text, keyEnd);
    if (text[i] !== ':') return undefined;
    const end = valueEnd(text, skipSpace(text, i + 1));
    if (end < 0) return undefined;
    members.push({ key, start, end });
    i = skipSpace(text, end);
    if (text[i] === ',') i = skipSpace(text, i + 1);
    else if (text[i] === '}') return skipSpace(text, i + 1) === text.length ? { members, open, close: i } : undefined;
    else return undefined;
  }
}

/** JSON's whitespace (RFC 8259 section 2). */
function skipSpace(text: string, i: number): number {
  while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  return i;
}

/** The index after the string that starts at `i` (a `"`), or -1 when it does not end. */
function stringEnd(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    if (text[j] === '\\') j++;
    else if (text[j] === '"') return j + 1;
  }
  return -1;
}

/**
 * The index after the value that starts at `i`: a string, an object or array (brackets counted outside strings), or
 * a number or literal up to the next separator. Whether it is valid JSON is checked once the cut is made.
 */
function valueEnd(text: string, i: number): number {
  const c = text[i];
  if (c === '"') return stringEnd(text, i);
  if (c === '{' || c === '[') {
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      const d = text[j];
      if (d === '"') {
        j = stringEnd(text, j) - 1;
        if (j < 0) return -1;
      } else if (d === '{' || d === '[') depth++;
      else if (d === '}' || d === ']') {
        if (--depth === 0) return j + 1;
      }
    }
    return -1;
  }
  let j = i;
  while (j < text.length && !',}] \t\n\r'.includes(text[j]!)) j++;
  return j === i ? -1 : j;
}
