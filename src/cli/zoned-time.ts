import { createClock, nextDay } from '../web/time.js';

/**
 * Times on the command line as the operator reads them (docs/reference.md#time-zone): an instant is written in the
 * config's `timezone` with its offset, and a day given as `--from` / `--to` is that day there, read by the same clock
 * as the admin API's and the dashboard's dates (web/time.ts).
 */

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * ISO 8601 in `zone` with its offset, `2026-11-27T13:45:00+05:30`: the instant the record holds in UTC, the same
 * instant to a program that reads it, the wall clock of the zone to a person. Milliseconds are written when there are
 * any, so nothing of the stored time is lost. Text that is no time comes back as it is.
 */
export function zonedIso(zone: string): (at: string) => string {
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
    timeZoneName: 'longOffset',
  });
  return (at) => {
    const date = new Date(at);
    if (Number.isNaN(date.getTime())) return at;
    const p = Object.fromEntries(format.formatToParts(date).map((part) => [part.type, part.value]));
    // `GMT+05:30`, `GMT-03:00`; `GMT` alone where the offset is zero in some ICU versions.
    const offset = p.timeZoneName === 'GMT' ? '+00:00' : (p.timeZoneName ?? '').replace(/^GMT/, '');
    const ms = date.getUTCMilliseconds();
    const fraction = ms === 0 ? '' : `.${String(ms).padStart(3, '0')}`;
    return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}:${p.second}${fraction}${offset}`;
  };
}

/**
 * `--from DAY` and `--to DAY` as the store's bounds: from the first day's midnight in `zone`, to the midnight after
 * the last day there (both days included). A day that is not `YYYY-MM-DD` or does not exist is refused in one line.
 */
export function dayRange(zone: string, days: { from?: string; to?: string }): { from?: string; to?: string } {
  const clock = createClock(zone);
  const start = (day: string, option: string) => {
    const at = DAY.test(day) ? clock.dayStart(day) : undefined;
    if (at === undefined) throw new Error(`${option} takes a day, YYYY-MM-DD, not ${JSON.stringify(day)}`);
    return at;
  };
  return {
    from: days.from === undefined ? undefined : start(days.from, '--from'),
    to: days.to === undefined ? undefined : (start(days.to, '--to'), start(nextDay(days.to), '--to')),
  };
}
