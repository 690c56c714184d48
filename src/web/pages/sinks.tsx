import { type Context, Hono } from 'hono';
import type { SinkView } from '../../admin/sinks.js';
import { Can } from '../can.js';
import { CardTable, Note, Time } from '../components.js';
import type { WebContext, WebEnv } from '../context.js';
import { age } from '../time.js';
import { SinkState } from './overview.js';

/**
 * `/ui/sinks`: the sinks of `GET /admin/sinks`, with pause and resume (docs/reference.md#what-every-sink-shares and
 * docs/reference.md#dashboard), through the same operations as the admin API: a pause is kept in the store, for every
 * replica and every restart.
 */
export function sinksPage(ctx: WebContext): Hono<WebEnv> {
  const act = (paused: boolean) =>
    async function pauseOrResume(c: Context<WebEnv>) {
      const name = c.req.param('name')!;
      // A resume wakes this worker now (pauseSink, with the notify its operations were built with); another
      // replica's looks at the outbox again within a second.
      await ctx.act(c).sinks.pauseSink(name, paused);
      return c.redirect(`/ui/sinks?${new URLSearchParams({ done: paused ? 'paused' : 'resumed', sink: name })}`, 303);
    };
  return new Hono<WebEnv>()
    .get('/', ctx.allow('viewer'), async (c) => {
      const sinks = ctx.shown(await ctx.sinks.listSinks());
      const done = c.req.query('done');
      const sink = sinks.find((s) => s.name === c.req.query('sink'))?.name;
      const message =
        sink && (done === 'paused' || done === 'resumed')
          ? `${done === 'paused' ? 'Paused' : 'Resumed'} ${sink}.`
          : undefined;
      return c.render(<Sinks ctx={ctx} sinks={sinks} done={message} />, { title: 'Sinks', section: 'sinks' });
    })
    .post('/:name/pause', ctx.allow('operator'), act(true))
    .post('/:name/resume', ctx.allow('operator'), act(false));
}

/** A sink's deliveries by state, each a column of its own. */
const COUNTS = [
  ['pending', 'Pending'],
  ['in_flight', 'In flight'],
  ['done', 'Done'],
  ['dead', 'Dead'],
] as const;

function Sinks({ ctx, sinks, done }: { ctx: WebContext; sinks: SinkView[]; done?: string }) {
  return (
    <>
      <h1>Sinks</h1>
      {done && <Note kind="ok">{done}</Note>}
      <p class="muted">
        A paused sink keeps its deliveries waiting, on every replica and across restarts, until it is resumed.
      </p>
      <CardTable
        label="Sinks"
        columns={[
          'Sink',
          'State',
          ...COUNTS.map(([, text]) => ({ text, num: true as const })),
          'Oldest pending',
          'Last success',
          'Last error',
          'Action',
        ]}
      >
        {sinks.map((s) => (
          <tr>
            <th scope="row" data-label="Sink">
              <span>
                <a href={`/ui/deliveries?sink=${encodeURIComponent(s.name)}`}>{s.name}</a>{' '}
                <span class="muted">{s.type}</span>
              </span>
            </th>
            <td data-label="State">
              <div>
                <SinkState sink={s} />
                {s.rate_limited_until && (
                  <div class="muted">
                    until <Time at={s.rate_limited_until} clock={ctx.clock} />
                  </div>
                )}
              </div>
            </td>
            {COUNTS.map(([state, label]) => (
              <td data-label={label} class="num">
                {s.deliveries[state]}
              </td>
            ))}
            <td data-label="Oldest pending">
              {s.deliveries.pending > 0 ? age(s.oldest_pending_age_seconds) : <span class="muted">none</span>}
            </td>
            <td data-label="Last success">
              <Time at={s.last_success_at} clock={ctx.clock} />
            </td>
            <td data-label="Last error">
              {s.last_error !== null && (
                // A failure older than the last success is history: shown muted, and said to be before it.
                <div class={s.failing ? undefined : 'muted'}>
                  {s.last_error}
                  {s.last_error_at && (
                    <div class="muted">
                      <Time at={s.last_error_at} clock={ctx.clock} />
                      {!s.failing && ', before the last success'}
                    </div>
                  )}
                </div>
              )}
            </td>
            <td data-label="Action">
              <Can needs="operator">
                <form
                  class="inline"
                  method="post"
                  action={`/ui/sinks/${encodeURIComponent(s.name)}/${s.paused ? 'resume' : 'pause'}`}
                >
                  <button
                    type="submit"
                    class={s.paused ? '' : 'secondary'}
                    aria-label={`${s.paused ? 'Resume' : 'Pause'} ${s.name}`}
                  >
                    {s.paused ? 'Resume' : 'Pause'}
                  </button>
                </form>
              </Can>
            </td>
          </tr>
        ))}
      </CardTable>
    </>
  );
}
