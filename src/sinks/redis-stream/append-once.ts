import type { Redis } from 'ioredis';

/**
 * The entry and its marker, written together or not at all (docs/reference.md#queues-and-databases, `redis-stream`):
 * one Lua script, which Redis runs with no other command in between
 * (https://redis.io/docs/latest/develop/interact/programmability/eval-intro/), so two deliveries of one key racing each
 * other add one entry.
 *
 * The order matters. A script is atomic but is not rolled back: a command that fails stops it and keeps what the
 * commands before it wrote. So the marker is read first (nothing written), the entry is added next (a WRONGTYPE
 * or an OOM stops the script there, with nothing written), and the marker is set last, holding the entry's id,
 * by a SET that cannot fail (a Redis at its memory limit refuses only a script's first write, "otherwise we can't
 * stop in the middle": Redis src/script.c, scriptVerifyOOM). Setting the marker
 * first, `SET NX` then XADD, would leave a marker without an entry whenever XADD fails, and every later attempt
 * would be taken for a repeat: a call lost.
 *
 * KEYS[1] the stream, KEYS[2] the marker; ARGV[1] the marker's life in ms, ARGV[2] maxlen (0: no trimming), then
 * the entry's field/value pairs. Returns {1, new entry id} or {0, id of the entry the marker names}.
 */
const LUA = `
local sent = redis.call('GET', KEYS[2])
if sent then return {0, sent} end
local xadd = {'XADD', KEYS[1]}
local maxlen = tonumber(ARGV[2])
if maxlen > 0 then
  xadd[#xadd + 1] = 'MAXLEN'
  xadd[#xadd + 1] = '~'
  xadd[#xadd + 1] = ARGV[2]
end
xadd[#xadd + 1] = '*'
for i = 3, #ARGV do xadd[#xadd + 1] = ARGV[i] end
local id = redis.call(unpack(xadd))
redis.call('SET', KEYS[2], id, 'PX', ARGV[1])
return {1, id}
`;

const COMMAND = 'callhookAppendOnce';

/** ioredis's `scripts` option: each is sent by EVALSHA, and by EVAL when the server answers NOSCRIPT (Script.ts). */
export const APPEND_ONCE_SCRIPTS = { [COMMAND]: { lua: LUA, numberOfKeys: 2 } };

export interface AppendOnce {
  stream: string;
  marker: string;
  ttlMs: number;
  /** 0 keeps every entry; otherwise `MAXLEN ~ maxlen` (https://redis.io/docs/latest/commands/xadd/#capped-streams). */
  maxlen: number;
  fields: readonly [string, string][];
}

export interface Appended {
  /** False when the marker was there: an earlier attempt added the entry. */
  added: boolean;
  /** The entry's stream id, the new one or the one the marker names. */
  entryId: string;
}

type WithScript = Redis & Record<typeof COMMAND, (...args: (string | number)[]) => Promise<[number, string]>>;

/** Runs the script on a client made with `scripts: APPEND_ONCE_SCRIPTS`. */
export async function appendOnce(
  client: Redis,
  { stream, marker, ttlMs, maxlen, fields }: AppendOnce,
): Promise<Appended> {
  const [added, entryId] = await (client as WithScript)[COMMAND](stream, marker, ttlMs, maxlen, ...fields.flat());
  return { added: added === 1, entryId };
}
