/**
 * Secrets never reach a log line, an admin reply, the config check, a stored error or a metric
 * (docs/reference.md#secrets). Which values are secret is decided once at start-up (secret-values.ts); this is the one
 * masker every output goes through, and it knows the forms a secret takes on its way through other systems.
 */

/**
 * The spellings a secret takes in transit (docs/reference.md#secrets), as one pattern per secret: each character that
 * is not a letter or a digit may stand as itself, percent-encoded (either case of hex, as a path, a query or a form
 * body writes it; a space also as `+`), JSON-escaped (`\"`, `\\`, PHP's `\/`, a `\uXXXX` in either case, as Go writes
 * `<>&` and .NET writes `+`), or so escaped twice (JSON text kept inside JSON: a raw body in an admin reply, an echoed
 * error inside an error). Encoders choose per character which to escape, so a pattern per character, not a list of
 * whole spellings, is what catches them all. And base64: see `base64Cores` and `maskBasic`.
 */
function spellingPattern(secret: string): string {
  let pattern = '';
  for (const ch of secret) pattern += /^[A-Za-z0-9]$/.test(ch) ? ch : `(?:${characterSpellings(ch).join('|')})`;
  return pattern;
}

function characterSpellings(ch: string): string[] {
  const hex = (n: number, width: number) =>
    [...n.toString(16).padStart(width, '0')].map((d) => (/[a-f]/.test(d) ? `[${d}${d.toUpperCase()}]` : d)).join('');
  const units = [...Array(ch.length).keys()].map((i) => ch.charCodeAt(i));
  const uEscape = (backslashes: string) => units.map((u) => `${backslashes}u${hex(u, 4)}`).join('');
  const spellings = [
    escapeRegExp(ch),
    [...Buffer.from(ch)].map((byte) => `%${hex(byte, 2)}`).join(''),
    uEscape('\\\\'),
    uEscape('\\\\\\\\'),
  ];
  if (ch === ' ') spellings.push('\\+');
  // JSON's short escapes, once and twice: \" \\ \/ and \\\" \\\\\\\\ \\\/.
  if (ch === '"' || ch === '\\' || ch === '/')
    spellings.push(`\\\\${escapeRegExp(ch)}`, `\\\\\\\\\\\\${escapeRegExp(ch)}`, `\\\\\\\\${escapeRegExp(ch)}`);
  return spellings;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

/**
 * Base64 writes 3 bytes as 4 characters, so a secret inside base64 text reads one of three ways, by where its first
 * byte falls in a group of three. For each, the characters made from the secret's bytes alone: those appear in any
 * base64 of a text that holds the secret there, whatever stands around it. Shorter than 8 characters they would
 * match by chance; every secret of 8 bytes or more gives three. A Basic header is decoded whole (`maskBasic`).
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

/** `Basic <base64>` as an upstream quotes a header back; its credentials are decoded and looked into. */
const BASIC = /(basic\s+)([A-Za-z0-9+/]{4,}={0,2})/gi;

interface Matcher {
  /** True when the text holds a secret in some spelling. */
  test(text: string): boolean;
  replace(text: string): string;
}

function matcher(secrets: Iterable<string>): Matcher {
  const list = [...new Set(secrets)].filter(Boolean).sort((a, b) => b.length - a.length);
  if (list.length === 0) return { test: () => false, replace: (text) => text };
  // Longest first, so a secret that contains another is masked whole.
  const alternatives = [...list.map(spellingPattern), ...list.flatMap(base64Cores).map(escapeRegExp)];
  const spelled = new RegExp(alternatives.join('|'), 'g');
  const inBasic = (credentials: string) => {
    const decoded = Buffer.from(credentials, 'base64').toString('utf8');
    return list.some((secret) => decoded.includes(secret));
  };
  const hasBasic = (text: string) => /basic\s/i.test(text) && [...text.matchAll(BASIC)].some((m) => inBasic(m[2]!));
  return {
    test(text) {
      spelled.lastIndex = 0;
      return spelled.test(text) || hasBasic(text);
    },
    replace(text) {
      const masked = text.replace(spelled, '***');
      return /basic\s/i.test(masked)
        ? masked.replace(BASIC, (whole, scheme: string, credentials: string) =>
            inBasic(credentials) ? `${scheme}***` : whole,
          )
        : masked;
    },
  };
}

function maskingValues(replace: (text: string) => string): (value: unknown) => unknown {
  const mask = (value: unknown): unknown => {
    if (typeof value === 'string') return replace(value);
    if (Array.isArray(value)) return value.map(mask);
    // What JSON would write for it: a Date or a URL as its text.
    if (typeof (value as { toJSON?: unknown } | null)?.toJSON === 'function')
      return mask((value as { toJSON(): unknown }).toJSON());
    if (value !== null && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [replace(k), mask(v)]));
    return value;
  };
  return mask;
}

/** A copy of `value` with every configured secret in its strings and property names replaced by `***`. */
export function maskSecrets(value: unknown, secrets: readonly string[]): unknown {
  return maskingValues(matcher(secrets).replace)(value);
}

/**
 * Secrets fixed at start-up, or a set that keys are added to while serving (docs/reference.md#start-and-set-up: kept
 * keys are read again while serving, and are secrets as much as the first ones, section 6).
 */
export type SecretList = readonly string[] | ReadonlySet<string>;

/**
 * The secrets of a running serve: keys are added as they are read again, and a sink adds a credential it fetched
 * (an OAuth access token) and forgets it once a newer one has replaced it, so the set does not grow with every
 * token of a long run. `version` changes with every change, which is how a masker knows to make its pattern again.
 */
export class SecretSet extends Set<string> {
  version = 0;

  override add(value: string): this {
    if (!this.has(value)) this.version++;
    return super.add(value);
  }

  override delete(value: string): boolean {
    const deleted = super.delete(value);
    if (deleted) this.version++;
    return deleted;
  }
}

/**
 * Masks configured secrets in JSON text that comes again and again (every log line, every admin reply). Text that
 * holds none, in any spelling, comes back as it is; text that holds one is parsed and masked string by string, so
 * a secret made of digits or punctuation cannot cut a number or the JSON itself in two. Text that is not JSON has
 * each spelling replaced where it stands. A trailing newline (a log line's) is kept.
 */
export function secretMasker(secrets: SecretList): (text: string) => string {
  let known = -1;
  let match: Matcher = matcher([]);
  let mask: (value: unknown) => unknown = (value) => value;
  return (text) => {
    // A set changes while serving (keys reloaded from their file or the database, keys/ring.ts; a sink's fetched
    // tokens): the pattern is made again when it has changed, and only then. A plain set only ever grows.
    const size =
      secrets instanceof SecretSet
        ? secrets.version
        : secrets instanceof Set
          ? secrets.size
          : (secrets as readonly string[]).length;
    if (size !== known) {
      known = size;
      match = matcher(secrets);
      mask = maskingValues(match.replace);
    }
    if (!match.test(text)) return text;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return match.replace(text);
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
