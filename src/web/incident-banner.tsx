import type { Logger } from 'pino';
import type { IncidentView } from '../admin/incidents.js';

/**
 * The line above every signed-in page while an incident is open (docs/reference.md#dashboard): how many, which rules
 * about what, and a link to `/ui/incidents`. Read once a page (`admin.incidents.open()`); when that read fails, the
 * page is still served, and the banner says it could not tell.
 */

/** More than this are counted, not named: the banner stays one line on a wide screen. */
const NAMED = 4;

/** What an incident is about, as the banner and the incidents page name it: `dead_delivery (crm)`. */
export function incidentName({ rule, key }: Pick<IncidentView, 'rule' | 'key'>): string {
  return key === null ? rule : `${rule} (${key})`;
}

/** `2 open incidents`. */
const howMany = (n: number) => `${n} open ${n === 1 ? 'incident' : 'incidents'}`;

/** `dead_delivery (crm), no_calls (sales, acknowledged)`: the first few by name, the rest counted. */
function names(open: readonly Pick<IncidentView, 'rule' | 'key' | 'acknowledged_at'>[]): string {
  const named = open.slice(0, NAMED).map(({ rule, key, acknowledged_at }) => {
    const about = [key, acknowledged_at === null ? undefined : 'acknowledged'].filter((part) => part != null);
    return about.length === 0 ? rule : `${rule} (${about.join(', ')})`;
  });
  return `${named.join(', ')}${open.length > NAMED ? ` and ${open.length - NAMED} more` : ''}`;
}

/**
 * The banner itself: a region of its own (a landmark a screen reader can jump to), its words saying what the colour
 * says. Nothing at all when no incident is open.
 */
export async function IncidentBanner({ read, log }: { read: () => Promise<IncidentView[]>; log: Logger }) {
  let open: IncidentView[];
  try {
    open = await read();
  } catch (err) {
    log.warn({ err }, 'dashboard: could not read the open incidents for the banner');
    return (
      <section class="banner unread" aria-label="Open incidents">
        <p>
          <strong>Open incidents could not be read</strong> (the log says why). <a href="/ui/incidents">Incidents</a>
        </p>
      </section>
    );
  }
  if (open.length === 0) return null;
  const waiting = open.some((incident) => incident.acknowledged_at === null);
  return (
    <section class={`banner ${waiting ? 'open' : 'acknowledged'}`} aria-label="Open incidents">
      <p>
        <span class="banner-mark" aria-hidden="true">
          !
        </span>
        <strong>{howMany(open.length)}</strong>: {names(open)}. <a href="/ui/incidents">See the incidents</a>
      </p>
    </section>
  );
}
