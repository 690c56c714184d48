import type { Logger } from 'pino';
import type { KeptKeys } from './kept.js';
import type { KeyRing } from './ring.js';

/**
 * Keeps a ring in step with where its keys are kept, so a key made by `callhook keys generate` or written by hand
 * is accepted within 2 s without a restart (docs/reference.md#start-and-set-up), on every replica.
 *
 * A poll, not a file watch: fs.watch follows the file it was given, which an editor's save (a new file renamed
 * over the old one, as writeKeyFile does too) replaces, and it behaves differently on every platform; and keys
 * kept in PostgreSQL have nothing to watch. One poll a second serves both places alike (a stat, or one indexed
 * row); one poll at a time, each after the last one ended, so a slow database never stacks them up.
 */

export interface FollowOptions {
  log: Logger;
  /** What the ring holds, for messages: "webhook keys", "admin token". */
  what: string;
  everyMs?: number;
}

export interface Following {
  stop(): void;
}

export function followKeys(ring: KeyRing, kept: KeptKeys, { log, what, everyMs = 1_000 }: FollowOptions): Following {
  const state: FollowState = { ring, kept, log, what, warned: false, stopped: false, timer: undefined };
  const next = () => {
    if (state.stopped) return;
    // Unref'd: following keys never keeps a process alive that has nothing else to do.
    state.timer = setTimeout(() => void pollOnce(state).finally(next), everyMs).unref();
  };
  next();
  return {
    stop() {
      state.stopped = true;
      clearTimeout(state.timer);
    },
  };
}

interface FollowState {
  ring: KeyRing;
  kept: KeptKeys;
  log: Logger;
  what: string;
  /** A warning was logged and nothing good has been read since: one warning per bad spell, not one a second. */
  warned: boolean;
  stopped: boolean;
  timer: NodeJS.Timeout | undefined;
}

async function pollOnce(state: FollowState): Promise<void> {
  const { ring, kept, log, what } = state;
  const polled = await kept
    .poll()
    .catch((err: unknown) => ({ problem: `cannot be read (${err instanceof Error ? err.message : String(err)})` }));
  if (state.stopped) return; // the store may be closing under a poll that was under way
  if ('problem' in polled) {
    // An empty or unreadable file must not lock everyone out: the keys accepted so far stay accepted. The line
    // names the place and the count, never a key (docs/reference.md#operating).
    if (!state.warned)
      log.warn(
        { where: kept.where, kept: ring.keys.length },
        `${what}: ${kept.where} ${polled.problem}; what was accepted before stays accepted`,
      );
    state.warned = true;
    return;
  }
  if (!('keys' in polled)) return;
  if (state.warned) log.info({ where: kept.where }, `${what}: ${kept.where} holds keys again`);
  state.warned = false;
  if (sameKeys(polled.keys, ring.keys)) return;
  ring.replace(polled.keys);
  log.info({ where: kept.where, kept: polled.keys.length }, `${what} read again from ${kept.where}`);
}

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((key, i) => key === b[i]);
}
