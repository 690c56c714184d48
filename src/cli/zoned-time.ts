import { createClock, nextDay } from '../web/time.js';

/**
 * Times on the command line as the operator reads them (docs/reference.md#time-zone): an instant is written in the
 * config's `timezone` with its offset, and a day given as `--from` / `--to` is that day there, read by the same clock
 * as the admin API's and the dashboard's dates (web/time.ts).
 */

/** ISO 8601 in `zone` with its offset (Clock.iso): how the CLI writes a received time. */
export function zonedIso(zone: string): (at: string) => string {
  return createClock(zone).iso;
}

/**
 * `--from DAY` and `--to DAY` as the store's bounds: from the first day's midnight in `zone`, to the midnight after
 * the last day there (both days included). A day that is not `YYYY-MM-DD` or does not exist is refused in one line.
 */
export function dayRange(zone: string, days: { from?: string; to?: string }): { from?: string; to?: string } {
  const clock = createClock(zone);
  const start = (day: string, option: string) => {
    const at = clock.dayStart(day);
    if (at === undefined) throw new Error(`${option} takes a day, YYYY-MM-DD, not ${JSON.stringify(day)}`);
    return at;
  };
  return {
    from: days.from === undefined ? undefined : start(days.from, '--from'),
    to: days.to === undefined ? undefined : (start(days.to, '--to'), start(nextDay(days.to), '--to')),
  };
}
