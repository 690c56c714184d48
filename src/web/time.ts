/**
 * Times as the operator reads them (docs/reference.md#time-zone): shown in the configured `timezone`, and a date given
 * to a filter is that day where the operator is, not in UTC.
 */

export interface Clock {
  zone: string;
  /** `26 Nov 2026, 14:03:09` in the zone; '' for nothing. */
  show(at: string | number | null | undefined): string;
  /** The UTC instant at which a `YYYY-MM-DD` day begins in the zone; undefined for anything else. */
  dayStart(day: string): string | undefined;
  /** Today's date in the zone, `YYYY-MM-DD`. */
  today(): string;
  /**
   * ISO 8601 in the zone with its offset, `2026-11-27T13:45:00+05:30`: the same instant to a program, the zone's wall
   * clock to a person; milliseconds when there are any. Text that is no time comes back as it is.
   */
  iso(at: string): string;
}

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

export function createClock(zone: string): Clock {
  const shown = new Intl.DateTimeFormat('en-GB', {
    timeZone: zone,
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
  });
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
  });

  /** The zone's wall clock at `ms`, read as if it were UTC: its difference from `ms` is the zone's offset then. */
  const wallAsUtc = (ms: number) => {
    const p = Object.fromEntries(parts.formatToParts(new Date(ms)).map((x) => [x.type, x.value]));
    return Date.UTC(
      Number(p.year),
      Number(p.month) - 1,
      Number(p.day),
      Number(p.hour),
      Number(p.minute),
      Number(p.second),
    );
  };

  return {
    zone,
    show(at) {
      if (at === null || at === undefined || at === '') return '';
      const date = new Date(at);
      return Number.isNaN(date.getTime()) ? String(at) : shown.format(date);
    },
    dayStart(day) {
      const m = DAY.exec(day);
      if (!m) return undefined;
      const midnight = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
      if (new Date(midnight).toISOString().slice(0, 10) !== day) return undefined;
      // Midnight there is midnight-as-UTC less the offset; the offset is read again at that instant, since a
      // change of offset (summer time) can fall between the two.
      let at = midnight - (wallAsUtc(midnight) - midnight);
      at = midnight - (wallAsUtc(at) - at);
      return new Date(at).toISOString();
    },
    today() {
      return new Date(wallAsUtc(Date.now())).toISOString().slice(0, 10);
    },
    iso(at) {
      const ms = new Date(at).getTime();
      if (Number.isNaN(ms)) return at;
      const millis = ((ms % 1000) + 1000) % 1000;
      // Offsets are whole minutes; the wall clock is read to the second, so the instant's own second is compared.
      const offset = Math.round((wallAsUtc(ms - millis) - (ms - millis)) / 60_000);
      const wall = new Date(ms + offset * 60_000).toISOString();
      const hhmm = (minutes: number) =>
        `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
      return `${wall.slice(0, 19)}${millis === 0 ? '' : wall.slice(19, 23)}${offset < 0 ? '-' : '+'}${hhmm(Math.abs(offset))}`;
    },
  };
}

/** The day after a `YYYY-MM-DD` day: a filter's "to" date includes its own day. */
export function nextDay(day: string): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
}

/** A duration in seconds as a person says it: `45 s`, `12 min`, `3 h 5 min`, `2 d 4 h`. */
export function age(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86_400)} d ${Math.floor((s % 86_400) / 3600)} h`;
}
