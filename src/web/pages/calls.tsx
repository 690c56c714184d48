import { Hono } from 'hono';
import type { CallsQuery } from '../../admin/calls.js';
import { PLATFORM_NAMES } from '../../platforms/platform.js';
import { isTestTraffic, RECORD_SOURCES } from '../../record.js';
import type { StoredCall } from '../../store/admin-queries.js';
import { NO_PLATFORM } from '../../store/admin-query.js';
import { CardTable, FilterSelect, Note, Pager, Tag, Time } from '../components.js';
import type { WebContext, WebEnv } from '../context.js';
import { nextDay } from '../time.js';

const PAGE = 50;
const FILTERS = [
  'q',
  'hook',
  'status',
  'source',
  'platform',
  'outcome',
  'sentiment',
  'phone',
  'from',
  'to',
  'test_calls',
] as const;
/** docs/reference.md#other-voice-platforms: the platform that sent a call, or none for the calling service's. */
const PLATFORM_CHOICES = [NO_PLATFORM, ...PLATFORM_NAMES] as const;
type Filters = Partial<Record<(typeof FILTERS)[number] | 'after', string>>;

/**
 * `/ui/calls`: the calls, newest first, with the admin API's filters (docs/reference.md#dashboard). The dates are days
 * in the configured zone, both included: "from 2026-11-20 to 2026-11-21" is those two days where the operator is.
 * Test traffic is listed only when "Show test calls" is ticked or the source chosen is one of it
 * (docs/reference.md#test-traffic), and is then marked as such.
 */
export function callsPage(ctx: WebContext): Hono<WebEnv> {
  return new Hono<WebEnv>().get('/', ctx.allow('viewer'), async (c) => {
    const given: Filters = {};
    for (const name of [...FILTERS, 'after'] as const) {
      const value = c.req.query(name)?.trim();
      if (value) given[name] = value;
    }
    const { query, error } = storeQuery(ctx, given);
    const { calls, next } = error ? { calls: [], next: null } : await ctx.calls.listCalls(query);
    return c.render(<Calls ctx={ctx} given={given} calls={ctx.shown(calls)} next={next} error={error} />, {
      title: 'Calls',
      section: 'calls',
    });
  });
}

function storeQuery(ctx: WebContext, given: Filters): { query: CallsQuery; error?: string } {
  const from = given.from === undefined ? undefined : ctx.clock.dayStart(given.from);
  const to = given.to === undefined ? undefined : ctx.clock.dayStart(given.to) && ctx.clock.dayStart(nextDay(given.to));
  if ((given.from !== undefined && !from) || (given.to !== undefined && !to))
    return { query: { limit: PAGE }, error: 'A date is a day as YYYY-MM-DD.' };
  if (given.status !== undefined && given.status !== 'accepted' && given.status !== 'held')
    return { query: { limit: PAGE }, error: 'Status is accepted or held.' };
  const source = RECORD_SOURCES.find((s) => s === given.source);
  if (given.source !== undefined && !source)
    return { query: { limit: PAGE }, error: `Source is one of ${RECORD_SOURCES.join(', ')}.` };
  const platform = PLATFORM_CHOICES.find((p) => p === given.platform);
  if (given.platform !== undefined && !platform)
    return { query: { limit: PAGE }, error: `Platform is one of ${PLATFORM_CHOICES.join(', ')}.` };
  // The phone is read as the admin API reads it (admin/calls.ts): any spelling of the number finds its calls.
  return {
    query: {
      text: given.q,
      hook: given.hook,
      status: given.status,
      source,
      platform,
      testCalls: given.test_calls === 'true',
      outcome: given.outcome,
      sentiment: given.sentiment,
      phone: given.phone,
      from,
      to,
      after: given.after,
      order: 'desc',
      limit: PAGE,
    },
  };
}

function Calls({
  ctx,
  given,
  calls,
  next,
  error,
}: {
  ctx: WebContext;
  given: Filters;
  calls: StoredCall[];
  next: string | null;
  error?: string;
}) {
  const hooks = [...ctx.hooks.values()].filter((h) => h.config.kind === 'end-of-call').map((h) => h.config.name);
  return (
    <>
      <h1>Calls</h1>
      {/* biome-ignore lint/a11y/useSemanticElements: the <search> element is too new for some browsers operators use. */}
      <form class="filters card" method="get" action="/ui/calls" role="search" aria-label="Filter calls">
        <div>
          <label for="q">Search text</label>
          <input id="q" name="q" type="search" value={given.q ?? ''} placeholder="a name, a word of the summary" />
        </div>
        <FilterSelect name="hook" label="Hook" choices={hooks} chosen={given.hook} />
        <FilterSelect name="status" label="Status" choices={['accepted', 'held']} chosen={given.status} />
        <FilterSelect name="source" label="Source" choices={RECORD_SOURCES} chosen={given.source} />
        <FilterSelect
          name="platform"
          label="Sent by"
          choices={PLATFORM_CHOICES}
          chosen={given.platform}
          text={(platform) => (platform === NO_PLATFORM ? 'the calling service' : platform)}
        />
        <div>
          <label for="outcome">Outcome</label>
          <input id="outcome" name="outcome" value={given.outcome ?? ''} />
        </div>
        <div>
          <label for="sentiment">Sentiment</label>
          <input id="sentiment" name="sentiment" value={given.sentiment ?? ''} />
        </div>
        <div>
          <label for="phone">Phone</label>
          <input id="phone" name="phone" type="tel" value={given.phone ?? ''} />
        </div>
        <div>
          <label for="from">From (day)</label>
          <input id="from" name="from" type="date" value={given.from ?? ''} />
        </div>
        <div>
          <label for="to">To (day, included)</label>
          <input id="to" name="to" type="date" value={given.to ?? ''} />
        </div>
        <div class="check">
          <input id="test_calls" name="test_calls" type="checkbox" value="true" checked={given.test_calls === 'true'} />
          <label for="test_calls">Show test calls</label>
        </div>
        <div class="actions">
          <button type="submit">Filter</button>
          <a href="/ui/calls">Clear</a>
        </div>
      </form>
      {error && <Note kind="error">{error}</Note>}
      {!error && calls.length === 0 && <Note kind="info">No call matches.</Note>}
      {calls.length > 0 && <CallTable ctx={ctx} calls={calls} label="Calls, newest first" />}
      <Pager path="/ui/calls" query={given} next={next} first={given.after === undefined} />
    </>
  );
}

/** A table of calls, shared by the calls page and the review queue. */
export function CallTable({ ctx, calls, label }: { ctx: WebContext; calls: StoredCall[]; label: string }) {
  return (
    <CardTable label={label} columns={['Received', 'Caller', 'Phone', 'Outcome', 'Sentiment', 'Summary', 'Status']}>
      {calls.map(({ record, status }) => {
        const name = [record.data.first_name, record.data.last_name]
          .filter((v) => v !== undefined && v !== '')
          .join(' ');
        return (
          <tr>
            <td data-label="Received">
              <a href={`/ui/calls/${encodeURIComponent(record.id)}`}>
                <Time at={record.received_at} clock={ctx.clock} />
              </a>
              {record.hook !== 'end-of-call' && <div class="muted">{record.hook}</div>}
              {record.platform !== undefined && <div class="muted">sent by {record.platform}</div>}
            </td>
            <td data-label="Caller">{name || <span class="muted">unknown</span>}</td>
            <td data-label="Phone" class="nowrap">
              {String(record.data.phone_number ?? '')}
            </td>
            <td data-label="Outcome">{String(record.data.call_outcome ?? '')}</td>
            <td data-label="Sentiment">{String(record.data.sentiment_analysis ?? '')}</td>
            <td data-label="Summary">{summary(record.data.call_summary)}</td>
            <td data-label="Status">
              {status === 'held' ? <Tag kind="warn">held</Tag> : <Tag kind="plain">accepted</Tag>}
              {isTestTraffic(record.source) && (
                <>
                  {' '}
                  <Tag kind="plain">test call ({record.source})</Tag>
                </>
              )}
              {record.problems.length > 0 && (
                <>
                  {' '}
                  <Tag kind="bad">
                    {record.problems.length} problem{record.problems.length === 1 ? '' : 's'}
                  </Tag>
                </>
              )}
            </td>
          </tr>
        );
      })}
    </CardTable>
  );
}

function summary(value: unknown): string {
  const text = value === undefined ? '' : String(value);
  return text.length > 140 ? `${text.slice(0, 139)}…` : text;
}
