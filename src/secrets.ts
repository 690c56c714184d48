import type { HookConfig, SinkConfig } from './config.js';

/**
 * Secrets never reach a log line, an admin reply or the config check (contract section 6): every configured one
 * is collected once, and text that could carry one is masked before it leaves the process.
 */

const SECRET_OPTION = /secret|token|password|passwd|api_?key|authorization|credential|webhook_url/i;

export function collectSecrets(apiKeys: string[], adminToken: string | undefined, databaseUrl: string | undefined, hooks: HookConfig[], sinks: SinkConfig[]): string[] {
  const secrets = new Set<string>([...apiKeys, ...hooks.flatMap((h) => h.keys)]);
  if (adminToken) secrets.add(adminToken);
  const dbPassword = databaseUrl ? safeUrl(databaseUrl)?.password : undefined;
  // The URL carries the password percent-encoded, a driver's error message may carry it decoded.
  if (dbPassword) for (const form of [dbPassword, decodeURIComponent(dbPassword)]) secrets.add(form);
  const visit = (value: unknown, secret: boolean): void => {
    if (typeof value === 'string' && secret && value.length >= 4) secrets.add(value);
    else if (Array.isArray(value)) value.forEach((v) => visit(v, secret));
    else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) visit(v, secret || SECRET_OPTION.test(k));
    }
  };
  visit(sinks, false);
  return [...secrets];
}

/**
 * A secret as it is, as JSON writes it inside a string (a quote or a backslash in it escaped) and as it reads in
 * JSON text kept inside JSON (a raw body in an admin reply, escaped twice); longest first, so a secret that
 * contains another is masked whole.
 */
function formsOf(secrets: readonly string[]): string[] {
  const escaped = (s: string) => JSON.stringify(s).slice(1, -1);
  const forms = secrets.flatMap((s) => [s, escaped(s), escaped(escaped(s))]);
  return [...new Set(forms)].filter(Boolean).sort((a, b) => b.length - a.length);
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

function safeUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

