import { Hono } from 'hono';
import { AUDIT_ACTIONS } from '../../operators/audit.js';
import type { AuditEntry, AuditQuery, OperatorStore } from '../../store/operators.js';
import { CardTable, FilterSelect, Note, Tag, Time } from '../components.js';
import type { WebContext, WebEnv } from '../context.js';
import { nextDay } from '../time.js';

const PAGE = 50;

interface Filters {
  actor?: string;
  action?: string;
  target?: string;
  from?: string;
  to?: string;
  before?: string;
}

/**
 * `/ui/audit` (admins only, docs/reference.md#audit-log): what people did through callhook, newest first: who, when
 * (in the configured zone), from which address, what it touched, how it ended and what else was kept (the names of
 * an edit's fields, a count, never a value). Filtered as `GET /admin/audit` is, by actor, action, target and days,
 * and paged.
 */
export function auditPage(
  ctx: WebContext,
  { operators }: { operators: Pick<OperatorStore, 'listAudit'> },
): Hono<WebEnv> {
  return new Hono<WebEnv>().get('/', ctx.allow('admin'), async (c) => {
    const given: Filters = Object.fromEntries(
      (['actor', 'action', 'target', 'from', 'to', 'before'] as const)
        .map((key) => [key, c.req.query(key)?.trim()])
        .filter(([, value]) => value !== undefined && value !== ''),
    );
    const { query, error } = storeQuery(ctx, given);
    const entries = query ? await operators.listAudit({ ...query, limit: PAGE + 1 }) : [];
    const next = entries.length > PAGE ? entries[PAGE - 1]!.id : null;
    c.status(error ? 400 : 200);
    return c.render(
      <Audit ctx={ctx} given={given} entries={ctx.shown(entries.slice(0, PAGE))} next={next} error={error} />,
      { title: 'Audit log', section: 'audit' },
    );
  });
}

/** The filters as the store reads them: a day is the configured zone's, `to` includes its own day. */
function storeQuery(ctx: WebContext, given: Filters): { query?: AuditQuery; error?: string } {
  const from = given.from === undefined ? undefined : ctx.clock.dayStart(given.from);
  const to = given.to === undefined ? undefined : ctx.clock.dayStart(given.to) && ctx.clock.dayStart(nextDay(given.to));
  if ((given.from !== undefined && !from) || (given.to !== undefined && !to))
    return { error: 'A date is a day as YYYY-MM-DD.' };
  if (given.action !== undefined && !(AUDIT_ACTIONS as readonly string[]).includes(given.action))
    return { error: `Action is one of ${AUDIT_ACTIONS.join(', ')}.` };
  const before = given.before === undefined ? undefined : Number(given.before);
  if (before !== undefined && !(Number.isSafeInteger(before) && before > 0))
    return { error: 'That is not a page of the audit log.' };
  return {
    query: { actor: given.actor?.toLowerCase(), action: given.action, target: given.target, from, to, before },
  };
}

function Audit({
  ctx,
  given,
  entries,
  next,
  error,
}: {
  ctx: WebContext;
  given: Filters;
  entries: AuditEntry[];
  next: number | null;
  error?: string;
}) {
  const query = (before?: number) => {
    const params = new URLSearchParams(
      Object.entries(given).filter((e): e is [string, string] => e[0] !== 'before' && e[1] !== undefined),
    );
    if (before !== undefined) params.set('before', String(before));
    const text = params.toString();
    return text === '' ? '/ui/audit' : `/ui/audit?${text}`;
  };
  return (
    <>
      <h1>Audit log</h1>
      <p class="muted">
        Every change made through callhook and every sign-in, newest first. Entries cannot be changed; retention.audit
        ages them out.
      </p>
      {/* biome-ignore lint/a11y/useSemanticElements: the <search> element is too new for some browsers operators use. */}
      <form class="filters card" method="get" action="/ui/audit" role="search" aria-label="Filter the audit log">
        <div>
          <label for="actor">Who</label>
          <input id="actor" name="actor" value={given.actor} placeholder="an email" />
        </div>
        <FilterSelect name="action" label="Action" choices={AUDIT_ACTIONS} chosen={given.action} />
        <div>
          <label for="target">Target</label>
          <input id="target" name="target" value={given.target} placeholder="a call, a sink…" />
        </div>
        <div>
          <label for="from">From</label>
          <input id="from" name="from" type="date" value={given.from} />
        </div>
        <div>
          <label for="to">To</label>
          <input id="to" name="to" type="date" value={given.to} />
        </div>
        <div class="actions">
          <button type="submit">Filter</button>
          <a href="/ui/audit">Clear</a>
        </div>
      </form>
      {error && <Note kind="error">{error}</Note>}
      {entries.length === 0 ? (
        !error && <Note kind="info">No entry matches.</Note>
      ) : (
        <CardTable label="Audit log" columns={['When', 'Who', 'Address', 'Action', 'Target', 'Outcome', 'Details']}>
          {entries.map((entry) => (
            <tr>
              <td data-label="When">
                <Time at={entry.at} clock={ctx.clock} />
              </td>
              <td data-label="Who" class="nowrap">
                {entry.actor}
              </td>
              <td data-label="Address" class="nowrap">
                {entry.address ?? <span class="muted">—</span>}
              </td>
              <td data-label="Action" class="nowrap">
                {entry.action}
              </td>
              <td data-label="Target">
                {entry.target === null ? (
                  <span class="muted">—</span>
                ) : entry.action.startsWith('call.') ? (
                  <a href={`/ui/calls/${encodeURIComponent(entry.target)}`}>{entry.target}</a>
                ) : (
                  entry.target
                )}
              </td>
              <td data-label="Outcome">
                <Tag kind={entry.outcome === 'ok' ? 'ok' : 'bad'}>{entry.outcome}</Tag>
              </td>
              <td data-label="Details">{entry.details === null ? '' : <Details details={entry.details} />}</td>
            </tr>
          ))}
        </CardTable>
      )}
      {(next !== null || given.before !== undefined) && (
        <nav class="pager" aria-label="Pages">
          {given.before !== undefined && <a href={query()}>Newest</a>}
          {next !== null && <a href={query(next)}>Older</a>}
        </nav>
      )}
    </>
  );
}

/** What an entry kept besides: `fields: a, b · count: 3`. */
function Details({ details }: { details: Record<string, unknown> }) {
  const shown = Object.entries(details).map(
    ([key, value]) =>
      `${key}: ${Array.isArray(value) ? value.join(', ') : typeof value === 'string' ? value : JSON.stringify(value)}`,
  );
  return <span class="small">{shown.join(' · ')}</span>;
}
