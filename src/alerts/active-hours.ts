import { z } from 'zod';

/**
 * `HH:MM-HH:MM`, the hours in which the `no_calls` rule watches (docs/reference.md#alerts), in the config's `timezone`.
 * Read strictly: two digits each, hours 00–23 (24:00 only as an end, for "until midnight"), minutes 00–59, and a start
 * unlike its end. An end before its start runs past midnight (`21:00-06:00`); `00:00-24:00` is all day.
 */
const HOURS = /^(\d{2}):(\d{2})-(\d{2}):(\d{2})$/;

export interface ActiveHours {
  /** As written. */
  text: string;
  /** Minutes after midnight. */
  from: number;
  to: number;
}

export function readActiveHours(text: string): ActiveHours | undefined {
  const match = HOURS.exec(text);
  if (!match) return undefined;
  const [h1, m1, h2, m2] = match.slice(1).map(Number) as [number, number, number, number];
  if (h1 > 23 || m1 > 59 || m2 > 59 || h2 > 24 || (h2 === 24 && m2 !== 0)) return undefined;
  const from = h1 * 60 + m1;
  const to = h2 * 60 + m2;
  return from === to ? undefined : { text, from, to };
}

/** Whether `minute` (after midnight) falls inside the hours. */
export function isActive({ from, to }: ActiveHours, minute: number): boolean {
  return from < to ? minute >= from && minute < to : minute >= from || minute < to;
}

export const activeHoursSchema = z.string().transform((text, ctx): ActiveHours => {
  const hours = readActiveHours(text);
  if (hours) return hours;
  ctx.addIssue({
    code: 'custom',
    message: `"${text}" is not HH:MM-HH:MM with hours 00-23 (24:00 as an end), minutes 00-59 and a start unlike its end`,
  });
  return z.NEVER;
});

const DAY_MINUTES = 1440;

/** One formatter a zone: making one costs about as much as a whole evaluation of the rules. */
const clocks = new Map<string, Intl.DateTimeFormat>();

function clockIn(timezone: string): Intl.DateTimeFormat {
  let clock = clocks.get(timezone);
  if (!clock) {
    clock = new Intl.DateTimeFormat('en-GB', {
      timeZone: timezone,
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    clocks.set(timezone, clock);
  }
  return clock;
}

/** The minute of the day (with its fraction) of epoch ms `at` in the time zone. */
export function minuteOfDay(at: number, timezone: string): number {
  const parts = clockIn(timezone).formatToParts(at);
  const field = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return field('hour') * 60 + field('minute') + (at % 60_000) / 60_000;
}

/**
 * The instant from which `ms` of active time have passed by `now`: the start of the window that `no_calls`'s
 * `quiet_for` counts in, skipping the hours outside (a quiet night does not count towards it). Walks back a stretch
 * of hours, in or out, at a time, reading the local time at each step, so a change of offset (summer time) is met at
 * the next step.
 */
export function activeWindowStart(hours: ActiveHours, timezone: string, now: number, ms: number): number {
  let t = now;
  let left = ms;
  // A stretch in and one out a day: a year of steps is far past any quiet_for.
  for (let step = 0; step < 800 && left > 0; step++) {
    // The stretch, in the hours or out of them, that the instant just before `t` is in, and back to where it began: a
    // whole day when the hours are all day.
    const active = isActive(hours, Math.floor(minuteOfDay(t - 1, timezone)));
    const start = active ? hours.from : hours.to;
    const back = ((minuteOfDay(t, timezone) - start + DAY_MINUTES) % DAY_MINUTES || DAY_MINUTES) * 60_000;
    if (active && back >= left) return t - left;
    if (active) left -= back;
    t -= back;
  }
  return t;
}
