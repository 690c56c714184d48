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
