/**
 * Secrets never reach a log line, an admin reply, the config check, a stored error or a metric (contract section
 * 6). Which values are secret is decided once at start-up (secret-values.ts); this is the one masker every output
 * goes through, and it knows the forms a secret takes on its way through other systems.
 */

/**
 * The forms a secret takes in transit (contract section 6): as it is, URL-encoded (a path, a query, a form body),
 * as JSON writes each of those inside a string (a quote or a backslash escaped; non-ASCII as `\u` escapes, as some
 * JSON writers do) and as it reads in JSON text kept inside JSON (a raw body in an admin reply, escaped twice); and
 * the base64 of it wherever it stands inside base64 text, as in a Basic `Authorization` header (`user:password`).
 * Longest first, so a secret that contains another is masked whole.
 */
export function formsOf(secrets: Iterable<string>): string[] {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (!secret) continue;
    for (const written of [secret, ...urlEncoded(secret)]) {
      const escaped = jsonEscaped(written);
      for (const form of [written, escaped, jsonEscaped(escaped), asciiEscaped(escaped)]) forms.add(form);
    }
    for (const core of base64Cores(secret)) forms.add(core);
  }
  return [...forms].filter(Boolean).sort((a, b) => b.length - a.length);
}

/**
 * As a URL carries it: each character escaped (a path segment, a query value), only what a URL cannot hold
 * escaped (a whole URL put together as text, a query as a browser or WHATWG URL writes it), and as a form body.
 */
function urlEncoded(secret: string): string[] {
  try {
    return [encodeURIComponent(secret), encodeURI(secret), new URL(`http://h/?${secret}`).search.slice(1), new URLSearchParams({ s: secret }).toString().slice(2)];
  } catch {
    return []; // a lone surrogate cannot be percent-encoded, so it cannot travel that way either
  }
}

function jsonEscaped(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}

function asciiEscaped(text: string): string {
  return text.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * Base64 writes 3 bytes as 4 characters, so a secret inside base64 text reads one of three ways, by where its first
 * byte falls in a group of three. For each, the characters made from the secret's bytes alone: those appear in any
 * base64 of a text that holds the secret there, whatever stands around it. Shorter than 8 characters they would
 * match by chance; every secret of 8 bytes or more gives three.
 */
function base64Cores(secret: string): string[] {
  const bytes = Buffer.from(secret);
  const cores: string[] = [];
  for (const offset of [0, 1, 2]) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    const first = Math.ceil(offset / 3) * 3;
    const last = Math.floor((offset + bytes.length) / 3) * 3;
    const core = encoded.slice((first / 3) * 4, (last / 3) * 4);
    if (core.length >= 8) cores.push(core);
  }
  return cores;
}

function replacing(forms: readonly string[]): (text: string) => string {
  return (text) => {
    let out = text;
    for (const form of forms) if (out.includes(form)) out = out.split(form).join('***');
    return out;
  };
}

function maskingValues(replace: (text: string) => string): (value: unknown) => unknown {
  const mask = (value: unknown): unknown => {
    if (typeof value === 'string') return replace(value);
    if (Array.isArray(value)) return value.map(mask);
    // What JSON would write for it: a Date or a URL as its text.
    if (typeof (value as { toJSON?: unknown } | null)?.toJSON === 'function') return mask((value as { toJSON(): unknown }).toJSON());
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [replace(k), mask(v)]));
    return value;
  };
  return mask;
}

/** A copy of `value` with every configured secret in its strings and property names replaced by `***`. */
export function maskSecrets(value: unknown, secrets: readonly string[]): unknown {
  return maskingValues(replacing(formsOf(secrets)))(value);
}

/**
 * Secrets fixed at start-up, or a set that keys are added to while serving (contract section 1: kept keys are read
 * again while serving, and are secrets as much as the first ones, section 6). A set only ever grows.
 */
export type SecretList = readonly string[] | ReadonlySet<string>;

/**
 * Masks configured secrets in JSON text that comes again and again (every log line, every admin reply). Text that
 * holds none, in either form, comes back as it is; text that holds one is parsed and masked string by string, so a
 * secret made of digits or punctuation cannot cut a number or the JSON itself in two. Text that is not JSON has
 * each form replaced where it stands. A trailing newline (a log line's) is kept.
 */
export function secretMasker(secrets: SecretList): (text: string) => string {
  let known = -1;
  let forms: string[] = [];
  let replace: (text: string) => string = (text) => text;
  let mask: (value: unknown) => unknown = (value) => value;
  return (text) => {
    // A set grows while serving (keys reloaded from their file or the database, keys/ring.ts) and never shrinks,
    // so a new size is a new secret: the forms are worked out again then, and only then.
    const size = secrets instanceof Set ? secrets.size : (secrets as readonly string[]).length;
    if (size !== known) {
      known = size;
      forms = formsOf([...secrets]);
      replace = replacing(forms);
      mask = maskingValues(replace);
    }
    if (!forms.some((form) => text.includes(form))) return text;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return replace(text);
    }
    return JSON.stringify(mask(parsed)) + (text.endsWith('\n') ? '\n' : '');
  };
}

/**
 * Bytes with every secret's UTF-8 bytes replaced by `***`: for bytes that are shown encoded (a refused body that is
 * not UTF-8, in base64), which no masker of the text around them can see into.
 */
export function maskBytes(bytes: Uint8Array, secrets: SecretList): Uint8Array {
  let out = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (const secret of [...secrets].filter(Boolean).sort((a, b) => b.length - a.length)) {
    const needle = Buffer.from(secret);
    const parts: Buffer[] = [];
    let from = 0;
    for (let at = out.indexOf(needle); at !== -1; at = out.indexOf(needle, from)) {
      parts.push(out.subarray(from, at), MASK);
      from = at + needle.length;
    }
    if (parts.length > 0) out = Buffer.concat([...parts, out.subarray(from)]);
  }
  return out;
}

const MASK = Buffer.from('***');
