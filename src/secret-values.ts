import { channelType } from './alerts/channels/types.js';
import { channelEntry } from './alerts/config.js';
import type { Config } from './config.js';
import type { SinkSpec } from './sinks/registry.js';

/**
 * What counts as a secret (docs/reference.md#secrets), decided here once, at start-up, from the loaded config and the
 * sink types it names. What comes out is a list of values; the masker (secrets.ts) takes each of them out of every
 * text callhook writes, in the forms a value takes in transit.
 */

/** An option holding one of these by its name is secret whatever its sink type declares. */
const SECRET_OPTION = /token|password|passwd|secret|api_?key|private_?key|credential|authorization|webhook_url/i;
/** docs/reference.md#secrets: in a header map, every header whose name says it carries a credential. */
const SECRET_HEADER = /key|token|secret|auth|password/i;
/** docs/reference.md#secrets: the query parameters of any URL that carry a credential. */
const SECRET_QUERY = new Set(['access_token', 'token', 'key', 'api_key', 'password', 'secret', 'sig', 'signature']);
/** `Bearer x`, `Basic x`, `Token x`: the credential after an Authorization scheme is a secret on its own too. */
const SCHEME = /^[A-Za-z][A-Za-z0-9_-]* +(\S+)\s*$/;
/**
 * Shorter values are not masked: a three-letter password would turn every `abc` of every line into `***`, and
 * mask nothing an attacker needs. Keys callhook generates are 43 characters.
 */
const MIN_SECRET_LENGTH = 4;

type Path = readonly (string | number)[];

export function secretValues(config: Config, specs: readonly Pick<SinkSpec, 'name' | 'secretOptions'>[]): string[] {
  const secrets = new Set<string>();
  const add = (value: string | undefined) => {
    if (value !== undefined && value.length >= MIN_SECRET_LENGTH) secrets.add(value);
  };

  // Every key and token callhook accepts.
  for (const key of config.apiKeys) add(key);
  for (const hook of config.hooks.values()) {
    for (const key of hook.keys) add(key);
    add(hook.platform?.secret);
  }
  add(config.adminToken);
  // CALLHOOK_TOKEN, a user's personal token (docs/reference.md#operators), wherever it is set.
  add(config.personalToken);
  add(config.metricsToken);
  add(config.reconcile?.apiKey);

  // The credentials inside URLs, DATABASE_URL's included.
  for (const url of [config.databaseUrl, config.reconcile?.apiUrl]) if (url) urlSecrets(url).forEach(add);

  const declared = new Map(specs.map((spec) => [spec.name, new Set(spec.secretOptions)]));
  for (const [index, sink] of config.sinks.entries())
    entrySecrets(sink, declared.get(sink.name) ?? new Set(), filledIn(config.filled, ['sinks', index])).forEach(add);
  // Alert channels are entries like sinks (docs/reference.md#alerts): a webhook URL, a routing key, an SMTP password.
  for (const [index, channel] of config.alerts.channels.entries()) {
    const secretPaths = new Set(channelType(channel.type)?.secretOptions);
    const filled = filledIn(config.filled, ['alerts', 'channels', index]);
    entrySecrets(channelEntry(channel), secretPaths, filled).forEach(add);
  }
  for (const filled of config.filled) {
    const [top] = filled.path;
    if (top === 'database_url' || (top === 'reconcile' && filled.path[1] === 'api_url')) add(filled.value);
  }
  return [...secrets];
}

/**
 * The secrets of one config entry (a sink, an alert channel): its declared and secret-named options, its credential
 * headers and the credentials inside its URLs; and a value filled in from the environment where it lands in a secret
 * option, any header or a URL.
 */
function entrySecrets(entry: unknown, secretPaths: ReadonlySet<string>, filled: readonly FilledAt[]): string[] {
  const out: string[] = [];
  walk(entry, [], (value, path) => {
    if (isSecretOption(path, secretPaths)) out.push(value);
    if (secretPaths.has(path.join('.'))) out.push(...secretUrlPath(value));
    if (headerName(path) !== undefined && SECRET_HEADER.test(headerName(path)!)) out.push(...headerSecrets(value));
    out.push(...urlSecrets(value));
  });
  for (const { path, value } of filled) {
    const landed = valueAt(entry, path);
    if (
      isSecretOption(path, secretPaths) ||
      headerName(path) !== undefined ||
      (typeof landed === 'string' && isUrl(landed))
    )
      out.push(value);
  }
  return out;
}

/**
 * A URL a type declares secret (a Slack webhook's) has its credential in its path: a service that quotes the path it
 * was sent, without the host, must not show it either. Only a declared one: an option merely named like a secret
 * (`token_url`) holds a public address whose path (`/token`) is in every other line.
 */
function secretUrlPath(value: string): string[] {
  if (!isUrl(value) || !URL.canParse(value)) return [];
  const { pathname } = new URL(value);
  return pathname.length > 1 ? [pathname] : [];
}

interface FilledAt {
  /** Inside its entry. */
  path: Path;
  value: string;
}

/** The values filled in inside the entry at `prefix` (`['sinks', 2]`), with their paths inside it. */
function filledIn(filled: Config['filled'], prefix: Path): FilledAt[] {
  return filled
    .filter((f) => prefix.every((key, i) => f.path[i] === key))
    .map((f) => ({ path: f.path.slice(prefix.length), value: f.value }));
}

function isSecretOption(path: Path, declared: ReadonlySet<string>): boolean {
  const names = path.filter((p): p is string => typeof p === 'string');
  // Inside a header map, a name says what the header is, not what the option is.
  const optionNames = names.includes('headers') ? names.slice(0, names.indexOf('headers')) : names;
  return declared.has(names.join('.')) || optionNames.some((name) => SECRET_OPTION.test(name));
}

/** The header's name when `path` is a value of a `headers` map. */
function headerName(path: Path): string | undefined {
  const at = path.lastIndexOf('headers');
  return at !== -1 && at === path.length - 2 && typeof path[at + 1] === 'string' ? (path[at + 1] as string) : undefined;
}

/** A credential header's value, the credential after its scheme, and for Basic the password it holds. */
function headerSecrets(value: string): string[] {
  const credential = SCHEME.exec(value)?.[1];
  const out = [value];
  if (credential) out.push(credential);
  if (credential && /^basic /i.test(value)) {
    const decoded = Buffer.from(credential, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon !== -1) out.push(decoded.slice(colon + 1));
  }
  return out;
}

function isUrl(text: string): boolean {
  return SCHEME_SLASHES.test(text);
}

/**
 * The password of a URL's user info, as written (percent-encoded) and decoded, with the Basic header a client
 * makes of it; and the values of the query parameters that carry credentials, both ways too. A URL the WHATWG
 * parser refuses may still be one a driver takes (`pg` reads `postgres://u:pw@/db?host=…`, several hosts, a `/` in
 * the password): its user info and query are then read by their delimiters.
 */
export function urlSecrets(text: string): string[] {
  if (!SCHEME_SLASHES.test(text)) return [];
  const parsed = URL.canParse(text) ? new URL(text) : undefined;
  const userInfo = parsed ? { user: parsed.username, password: parsed.password } : looseUserInfo(text);
  const query = parsed
    ? parsed.searchParams
    : new URLSearchParams(text.includes('?') ? text.slice(text.indexOf('?') + 1).split('#')[0] : '');
  const out: string[] = [];
  if (userInfo?.password) {
    const password = safeDecode(userInfo.password);
    // A client sends user info as a Basic header: its exact base64, whatever the password's length.
    out.push(userInfo.password, password, Buffer.from(`${safeDecode(userInfo.user)}:${password}`).toString('base64'));
  }
  for (const [name, value] of query) {
    if (SECRET_QUERY.has(name.toLowerCase()) && value) out.push(value, encodeURIComponent(value));
  }
  return out;
}

const SCHEME_SLASHES = /^[a-z][a-z0-9+.-]*:\/\//i;

/**
 * `scheme://user:password@…` by its delimiters: the user stops at `:`, the password runs to the last `@` before the
 * path.
 */
function looseUserInfo(text: string): { user: string; password: string } | undefined {
  const match = /^[a-z][a-z0-9+.-]*:\/\/([^/?#@:]*):([^?#]*)@/i.exec(text);
  return match ? { user: match[1]!, password: match[2]! } : undefined;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function walk(value: unknown, path: Path, visit: (value: string, path: Path) => void): void {
  if (typeof value === 'string') visit(value, path);
  else if (Array.isArray(value)) for (const [i, v] of value.entries()) walk(v, [...path, i], visit);
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) walk(v, [...path, k], visit);
}

/** The value at a path of plain objects and arrays; undefined where the path leads nowhere. */
export function valueAt(value: unknown, path: Path): unknown {
  let at = value;
  for (const key of path)
    at = at !== null && typeof at === 'object' ? (at as Record<string | number, unknown>)[key] : undefined;
  return at;
}
