import { hash, timingSafeEqual } from 'node:crypto';

/**
 * The keys a bearer check accepts now. Kept keys (docs/reference.md#start-and-set-up: generated into the data dir or,
 * with DATABASE_URL, into the database) change while serve runs, so the check asks the ring on every request rather
 * than holding a list of its own; the ring answers from memory, and whatever refreshes it (follow.ts) does its I/O off
 * the request's way.
 */
export interface KeyRing {
  /** The keys accepted now, in the order they are kept (the newest first). */
  readonly keys: readonly string[];
  /** Whether `token` is one of them, compared in constant time. */
  accepts(token: string): boolean;
  /** Accepts these keys from now on, and only these; a ring never holds none. */
  replace(keys: readonly string[]): void;
}

export interface KeyRingOptions {
  /**
   * The secrets the logger and the admin replies mask (docs/reference.md#secrets). Every key the ring ever holds is
   * added before it is accepted, and stays after it is replaced: a key rotated out is still a secret.
   */
  secrets?: Set<string>;
}

interface RingState {
  keys: readonly string[];
  digests: readonly Buffer[];
  secrets: Set<string> | undefined;
}

export function createKeyRing(keys: readonly string[], { secrets }: KeyRingOptions = {}): KeyRing {
  const state: RingState = { keys: [], digests: [], secrets };
  replace(state, keys);
  return {
    get keys() {
      return state.keys;
    },
    accepts: accepts.bind(null, state),
    replace: replace.bind(null, state),
  };
}

export function isKeyRing(value: unknown): value is KeyRing {
  return typeof (value as KeyRing | null)?.accepts === 'function';
}

function replace(state: RingState, keys: readonly string[]): void {
  if (keys.length === 0) throw new Error('a key ring requires at least one key');
  for (const key of keys) state.secrets?.add(key);
  // Hashed once per change, not per request. Both fields are swapped together: a request in between sees one
  // list or the other, never a mix.
  state.keys = [...keys];
  state.digests = keys.map(sha256);
}

/** Every digest is compared, whichever matches: the time taken says nothing about which key, or how many, matched. */
function accepts(state: RingState, token: string): boolean {
  const digest = sha256(token);
  let equal = false;
  for (const key of state.digests) equal = timingSafeEqual(key, digest) || equal;
  return equal;
}

/**
 * Digests of one length, so the constant-time compare never depends on the length of what was sent. One call, no Hash
 * object: about 1.2 µs less a request than createHash (docs/performance.md).
 */
function sha256(data: string): Buffer {
  return hash('sha256', data, 'buffer');
}
