import { z } from 'zod';

/**
 * The one duration grammar of the config and the CLI (docs/reference.md#durations): a number and a unit, several in a
 * row (`1h30m`), or a bare number of milliseconds.
 *
 * - Units: `ms`, `s`, `m` (minutes), `h`, `d`, `w`, lower case only (`M` would read as months to many).
 * - A part may have a decimal fraction (`1.5h`; the config has accepted it since its first release), read exactly in
 * decimal as amounts are (docs/reference.md#normalising): `1.1s` is 1100 ms, not 1100.0000000000002. A total that is
 * not a whole number of milliseconds (`0.5ms`, a bare `1.5`) is refused rather than rounded to something not written.
 * - Spaces around the text, between a number and its unit and between parts are allowed (`30 s` was accepted by
 *   the config before the grammar was shared, `1h 30m` reads as written); nothing else is.
 * - Parts may come in any order and a unit may repeat (`30m1h`), as Go's time.ParseDuration reads them.
 * - Where a duration decides what is deleted, a bare number is refused (readDeletingDuration).
 */

const UNIT_MS = { ms: 1n, s: 1000n, m: 60_000n, h: 3_600_000n, d: 86_400_000n, w: 604_800_000n } as const;
type Unit = keyof typeof UNIT_MS;
/** Whole digits, fraction digits (maybe none), unit. */
type Part = [string, string, Unit];

/** `ms` is tried before `m`, so `5ms` is five milliseconds and not five minutes and a stray `s`. */
const PART = /\s*(\d+)(?:\.(\d+))?\s*(ms|s|m|h|d|w)/y;
const BARE = /^\s*(\d+)(?:\.(\d+))?\s*$/;

/** What every refusal says after the text it refuses, so a reader sees the whole grammar once. */
export const DURATION_GRAMMAR =
  'a number and a unit ms, s, m, h, d or w, several in a row (1h30m), or a bare number of milliseconds';

export type DurationResult = { ms: number } | { error: string };

/** Reads `text` by the grammar above; the error says what is wrong without naming where the text came from. */
export function readDuration(text: string): DurationResult {
  const bare = BARE.exec(text);
  if (bare) return total(text, [[bare[1]!, bare[2] ?? '', 'ms']]);
  return withUnits(text, DURATION_GRAMMAR);
}

/** Reads `text` as parts with a unit each, or says it is not a duration by `grammar`. */
function withUnits(text: string, grammar: string): DurationResult {
  const part = new RegExp(PART);
  const parts: Part[] = [];
  let end = 0;
  for (let match = part.exec(text); match !== null; match = part.exec(text)) {
    parts.push([match[1]!, match[2] ?? '', match[3] as Unit]);
    end = part.lastIndex;
  }
  if (parts.length === 0 || text.slice(end).trim() !== '') return { error: `"${text}" is not a duration: ${grammar}` };
  return total(text, parts);
}

/**
 * Where a duration decides what is deleted (`callhook purge --older-than`, the config's `retention`), the grammar
 * without its bare number (docs/reference.md#durations): `90` meant as days reads as 90 milliseconds, and a purge of
 * everything older than that deletes every call there is. A number alone is refused with the fix, so the reader picks
 * the unit they meant.
 */
export const DELETING_GRAMMAR = 'a number and a unit ms, s, m, h, d or w, several in a row (90d, 1h30m)';

/** The refusal of a number without a unit where a duration deletes: `90 has no unit: write 90d for 90 days, …`. */
const noUnit = (n: string) => `${n} has no unit: write ${n}d for ${n} days, or ${n}ms for ${n} milliseconds`;

/** Reads a duration that decides what is deleted: the grammar above, but a bare number is an error. */
export function readDeletingDuration(text: string): DurationResult {
  const bare = BARE.exec(text);
  if (bare) return { error: noUnit(text.trim()) };
  return withUnits(text, DELETING_GRAMMAR);
}

/** Sums the parts exactly in integers: whole digits and fraction digits scaled by the unit, then divided once. */
function total(text: string, parts: readonly Part[]): DurationResult {
  let sum = 0n;
  for (const [whole, fraction, unit] of parts) {
    const scale = 10n ** BigInt(fraction.length);
    const scaled = BigInt(whole + fraction) * UNIT_MS[unit];
    if (scaled % scale !== 0n) return { error: `"${text}" is not a whole number of milliseconds` };
    sum += scaled / scale;
  }
  if (sum > BigInt(Number.MAX_SAFE_INTEGER)) return { error: `"${text}" is too long a duration` };
  return { ms: Number(sum) };
}

/** For a CLI option: the milliseconds, or an Error of one line that names the option (docs/reference.md#durations). */
export function durationOption(text: string, option: string): number {
  const read = readDuration(text);
  if ('error' in read) throw new Error(`${option}: ${read.error}`);
  return read.ms;
}

/**
 * For a CLI option whose duration decides what is deleted (`purge --older-than`): the milliseconds, or an Error of one
 * line that names the option, `--older-than 90 has no unit: write 90d for 90 days, or 90ms for 90 milliseconds`.
 */
export function deletingDurationOption(text: string, option: string): number {
  if (BARE.test(text)) throw new Error(`${option} ${noUnit(text.trim())}`);
  const read = readDeletingDuration(text);
  if ('error' in read) throw new Error(`${option}: ${read.error}`);
  return read.ms;
}

/**
 * For the config: a JSON number of milliseconds, or text in the grammar. The config's error names the key
 * (config.ts prefixes each issue with its path), so the message does not.
 */
export const durationSchema = z.union([z.number(), z.string()]).transform((value, ctx) => {
  if (typeof value === 'number') {
    if (Number.isSafeInteger(value) && value >= 0) return value;
    ctx.addIssue({ code: 'custom', message: `${value} is not a whole number of milliseconds` });
    return z.NEVER;
  }
  const read = readDuration(value);
  if ('ms' in read) return read.ms;
  ctx.addIssue({ code: 'custom', message: read.error });
  return z.NEVER;
});

/**
 * For a config key whose duration decides what is deleted (`retention`): text in the grammar with a unit. A JSON
 * number is refused as a bare number is, with the fix; the config's error names the key.
 */
export const deletingDurationSchema = z.union([z.number(), z.string()]).transform((value, ctx) => {
  const read = readDeletingDuration(String(value));
  if ('ms' in read) return read.ms;
  ctx.addIssue({ code: 'custom', message: read.error });
  return z.NEVER;
});

/**
 * A duration as the grammar writes it, in the largest units that say it exactly (`90d`, `1h30m`, `1s500ms`), weeks only
 * for a whole number of them (`2w`, not `12w6d`): what `config check`, the banner and the dashboard show of a configured
 * duration, read back as the same number.
 */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  let rest = BigInt(ms);
  if (rest % UNIT_MS.w === 0n) return `${rest / UNIT_MS.w}w`;
  let text = '';
  for (const unit of ['d', 'h', 'm', 's', 'ms'] as const) {
    const size = UNIT_MS[unit];
    if (rest >= size) {
      text += `${rest / size}${unit}`;
      rest %= size;
    }
  }
  return text;
}
