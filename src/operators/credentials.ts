import { createHash, randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';

/**
 * The secrets of people (docs/reference.md#operators): passwords kept as scrypt hashes, and the random secrets of
 * personal tokens, sessions and one-time links kept as SHA-256 digests (they are 256 random bits: a digest cannot be
 * reversed, and a fast one lets every request be checked by one indexed lookup).
 */

/** docs/reference.md#operators: a password has at least this many characters. */
export const MIN_PASSWORD_LENGTH = 12;
/** Longer is refused: scrypt reads all of it, and a megabyte of "password" is a way to spend the server's CPU. */
export const MAX_PASSWORD_LENGTH = 1024;

/** N = 2^15, r = 8, p = 1: OWASP's password storage recommendation for scrypt; 32 MiB and ~50 ms a hash. */
const SCRYPT: ScryptOptions = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const KEY_LENGTH = 32;

/** `scrypt$N$r$p$salt$hash` (base64url): the parameters travel with the hash, so they can be raised later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await derive(password, salt, SCRYPT);
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

/** Whether `password` is the one `stored` was made from; false for anything that is not such a hash. */
export async function verifyPassword(password: string, stored: string | null | undefined): Promise<boolean> {
  const parts = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/.exec(stored ?? '');
  if (!parts || password.length > MAX_PASSWORD_LENGTH) return false;
  const [, n, r, p, salt, hash] = parts as unknown as [string, string, string, string, string, string];
  const expected = Buffer.from(hash, 'base64url');
  const options = { N: Number(n), r: Number(r), p: Number(p), maxmem: SCRYPT.maxmem };
  const given = await derive(password, Buffer.from(salt, 'base64url'), options, expected.length);
  return timingSafeEqual(given, expected);
}

/**
 * The reason a password is refused, or undefined when it will do. Length is counted in characters as a person
 * types them (code points), not UTF-16 units.
 */
export function passwordProblem(password: string): string | undefined {
  const length = [...password].length;
  if (length < MIN_PASSWORD_LENGTH) return `a password has at least ${MIN_PASSWORD_LENGTH} characters`;
  if (password.length > MAX_PASSWORD_LENGTH) return `a password has at most ${MAX_PASSWORD_LENGTH} characters`;
  return undefined;
}

/**
 * A new random secret with its digest: the secret is shown once (a token, a link, a cookie) and only the digest is
 * kept. A personal token starts `chk_`, so it is recognisable in a leaked file and by secret scanners.
 */
export function newSecret(prefix = ''): { secret: string; digest: string } {
  const secret = prefix + randomBytes(32).toString('base64url');
  return { secret, digest: secretDigest(secret) };
}

export const TOKEN_PREFIX = 'chk_';

/** The digest under which a token, session or link is kept and looked up. */
export function secretDigest(secret: string): string {
  return createHash('sha256').update(secret).digest('base64url');
}

function derive(password: string, salt: Buffer, options: ScryptOptions, length = KEY_LENGTH): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, length, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}
