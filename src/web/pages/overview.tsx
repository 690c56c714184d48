import { Hono } from 'hono';
import type { SinkView } from '../../admin/sinks.js';
import { STORE_PROBE_MS, withinDeadline } from '../../http/deadline.js';
import type { ReconcileRun } from '../../store/reconcile-run.js';
import { BarChart, topBars } from '../charts.js';
import { CardTable, Note, Scroll, Tag, Time } from '../components.js';
import type { WebContext, WebEnv } from '../context.js';
import { type OverviewCounts, overviewCounter } from '../overview-counts.js';
import { age } from '../time.js';

/**
 * `/ui`: what came in lately, what became of it, and whether the sinks and the store keep up
 * (docs/reference.md#dashboard).
 */
export function overviewPage(ctx: WebContext): Hono<WebEnv> {
  const counts = overviewCounter(ctx.store);
  return new Hono<WebEnv>().get('/', ctx.allow('viewer'), async (c) => {
    const [figures, sinks, store, run] = await Promise.all([
      counts(),
      ctx.sinks.listSinks(),
      storeState(ctx),
      lastRun(ctx),
    ]);
    return c.render(
      <Overview ctx={ctx} figures={ctx.shown(figures)} sinks={ctx.shown(sinks)} store={store} run={ctx.shown(run)} />,
      { title: 'Overview', section: 'overview' },
    );
  });
}

async function storeState({ store, log }: WebContext): Promise<'ok' | 'failing'> {
  try {
    await withinDeadline(store.ping(), STORE_PROBE_MS, 'the store probe');
    return 'ok';
  } catch (err) {
    // As /readyz: the page says that it failed; what failed (hosts, users) is for the log.
    log.warn({ err, check: 'store' }, 'dashboard: the store probe failed');
    return 'failing';
  }
}

/**
 * The last reconcile run the store keeps (kept-run.ts); 'failing' when it cannot be read, which the store's state says
 * too.
 */
async function lastRun({ store, log }: WebContext): Promise<ReconcileRun | undefined | 'failing'> {
  try {
    return await withinDeadline(store.lastReconcileRun(), STORE_PROBE_MS, 'the last reconcile run');
  } catch (err) {
    log.warn({ err }, 'dashboard: cannot read the last reconcile run');
    return 'failing';
  }
}

function Overview({
  ctx,
  figures,
  sinks,
  store,
  run,
}: {
  ctx: WebContext;
  figures: OverviewCounts;
  sinks: SinkView[];
  store: 'ok' | 'failing';
  run: ReconcileRun | undefined | 'failing';
}) {
  const { day, week } = figures;
  const rows = [
    ['Accepted', 'accepted'],
    ['Duplicate', 'duplicate'],
    ['Held', 'held'],
    ['Refused (4xx, after the key check)', 'refused'],
    ['Not stored (5xx)', 'failed'],
  ] as const;
  return (
    <>
      <h1>Overview</h1>
      <h2>Calls received</h2>
      <p class="muted">
        Test calls (sent by <code>callhook replay</code> or <code>simulate</code>) are left out of these figures and of
        the requests below.
      </p>
      {figures.capped && (
        <Note kind="info">
          More calls arrived this week than the page counts: the figures cover the newest{' '}
          {figures.cap.toLocaleString('en')}.
        </Note>
      )}
      <div class="grid charts">
        <div class="card">
          <BarChart
            id="outcome-day"
            title={`Last 24 hours by outcome (${day.outcomes.length})`}
            bars={topBars(day.outcomes)}
          />
        </div>
        <div class="card">
          <BarChart
            id="outcome-week"
            title={`Last 7 days by outcome (${week.outcomes.length})`}
            bars={topBars(week.outcomes)}
          />
        </div>
        <div class="card">
          <BarChart
            id="sentiment-day"
            title={`Last 24 hours by sentiment (${day.sentiments.length})`}
            bars={topBars(day.sentiments)}
          />
        </div>
        <div class="card">
          <BarChart
            id="sentiment-week"
            title={`Last 7 days by sentiment (${week.sentiments.length})`}
            bars={topBars(week.sentiments)}
          />
        </div>
      </div>

      <h2>Requests</h2>
      <Scroll label="Requests by what became of them">
        <table>
          <thead>
            <tr>
              <th scope="col">Request</th>
              <th scope="col" class="num">
                Last 24 hours
              </th>
              <th scope="col" class="num">
                Last 7 days
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map(([label, key]) => (
              <tr>
                <th scope="row">{key === 'refused' ? <a href="/ui/refused">{label}</a> : label}</th>
                <td class="num">{day.requests[key]}</td>
                <td class="num">{week.requests[key]}</td>
              </tr>
            ))}
            <tr>
              <th scope="row">Wrong key (401), since this process started</th>
              <td class="num" colspan={2}>
                {ctx.wrongKeys()}
              </td>
            </tr>
          </tbody>
        </table>
      </Scroll>

      <h2>Sinks</h2>
      <CardTable
        label="Sinks"
        columns={['Sink', { text: 'Pending', num: true }, { text: 'Dead', num: true }, 'Oldest pending', 'State']}
      >
        {sinks.map((sink) => (
          <tr>
            <th scope="row" data-label="Sink">
              <span>
                <a href={`/ui/deliveries?sink=${encodeURIComponent(sink.name)}`}>{sink.name}</a>{' '}
                <span class="muted">{sink.type}</span>
              </span>
            </th>
            <td data-label="Pending" class="num">
              {sink.deliveries.pending + sink.deliveries.in_flight}
            </td>
            <td data-label="Dead" class="num">
              {sink.deliveries.dead > 0 ? (
                <a href={`/ui/deliveries?state=dead&sink=${encodeURIComponent(sink.name)}`}>{sink.deliveries.dead}</a>
              ) : (
                0
              )}
            </td>
            <td data-label="Oldest pending">
              {sink.deliveries.pending > 0 ? age(sink.oldest_pending_age_seconds) : <span class="muted">none</span>}
            </td>
            <td data-label="State">
              <div>
                <SinkState sink={sink} />
              </div>
            </td>
          </tr>
        ))}
      </CardTable>

      <h2>Store and intake</h2>
      <dl class="stats">
        <div>
          <dt>Store ({ctx.store.kind === 'sqlite' ? 'SQLite' : 'PostgreSQL'})</dt>
          <dd>{store === 'ok' ? <Tag kind="ok">commits</Tag> : <Tag kind="bad">failing</Tag>}</dd>
        </div>
        <div>
          <dt>Delivery worker</dt>
          <dd>{ctx.workerRunning() ? <Tag kind="ok">running</Tag> : <Tag kind="bad">stopped</Tag>}</dd>
        </div>
        <div>
          <dt>Intake</dt>
          <dd>{ctx.accepting() ? <Tag kind="ok">accepting</Tag> : <Tag kind="warn">draining</Tag>}</dd>
        </div>
        <div>
          <dt>Last reconcile run</dt>
          <dd class="small" id="last-reconcile">
            <LastReconcileRun run={run} ctx={ctx} />
          </dd>
        </div>
      </dl>
      <p class="muted">
        Counted <Time at={figures.countedAt} clock={ctx.clock} />. Only the last reconcile run is kept; the log has each
        run's summary.
      </p>

      <h2>Retention</h2>
      <p id="retention">
        {ctx.retention.join('; ')}.{' '}
        <span class="muted">
          Set by <code>retention</code> in the config; a held call, or one still owed to a sink, is never deleted.
        </span>
      </p>
    </>
  );
}

/** When it ended, whether it failed, what it stored (or would have, in a dry run) of what it found, and its error. */
function LastReconcileRun({ run, ctx }: { run: ReconcileRun | undefined | 'failing'; ctx: WebContext }) {
  if (run === 'failing') return <Tag kind="bad">cannot be read</Tag>;
  if (run === undefined) return <span class="muted">never run</span>;
  return (
    <>
      <Time at={run.finishedAt} clock={ctx.clock} />{' '}
      {run.errors > 0 ? <Tag kind="bad">failed</Tag> : <Tag kind="ok">finished</Tag>}
      {run.dryRun && (
        <>
          {' '}
          <Tag kind="plain">dry run</Tag>
        </>
      )}
      <br />
      <span class="muted">
        {run.dryRun ? `${run.stored} would be stored` : `${run.stored} stored`}, {run.alreadyReceived} already received,
        of {run.calls} {run.calls === 1 ? 'call' : 'calls'} found in {run.campaigns}{' '}
        {run.campaigns === 1 ? 'campaign' : 'campaigns'}
        {run.deferred > 0 && `; ${run.deferred} left for the next run`}; {run.errors}{' '}
        {run.errors === 1 ? 'error' : 'errors'}
        {run.since !== null && ` (campaigns since ${run.since})`};{' '}
        {run.trigger === 'serve' ? 'scheduled' : 'callhook reconcile'}
      </span>
      {run.error !== null && (
        <>
          <br />
          <span class="muted">{run.error}</span>
        </>
      )}
    </>
  );
}

/**
 * A sink's state as tags: paused or running, rate limited, and "last attempt failed" only while its last error is
 * newer than its last success. An older failure is history (docs/reference.md#what-every-sink-shares), said as such
 * in muted words.
 */
export function SinkState({ sink }: { sink: SinkView }) {
  const history = !sink.failing && sink.last_error_at !== null && sink.last_success_at !== null;
  return (
    <>
      {sink.paused ? (
        <Tag kind="warn">paused{sink.paused_by === 'config' ? ' (config)' : ''}</Tag>
      ) : (
        <Tag kind="ok">running</Tag>
      )}
      {sink.rate_limited_until !== null && (
        <>
          {' '}
          <Tag kind="warn">rate limited</Tag>
        </>
      )}
      {sink.failing && (
        <>
          {' '}
          <Tag kind="bad">last attempt failed</Tag>
        </>
      )}
      {history && (
        <div class="muted">
          last failed {age((Date.now() - Date.parse(sink.last_error_at!)) / 1000)} ago, delivering since
        </div>
      )}
    </>
  );
}
