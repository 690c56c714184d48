import { type Context, Hono } from 'hono';
import { CallhookError } from '../../errors.js';
import type { DeliveryInfo } from '../../store/admin-queries.js';
import type { DeliveryState as State } from '../../store/outbox.js';
import { Can } from '../can.js';
import { CardTable, FilterSelect, Note, Pager, Tag, Time } from '../components.js';
import type { WebContext, WebEnv } from '../context.js';

const STATES = ['pending', 'in_flight', 'done', 'dead'] as const;
/**
 * What a bulk retry takes (the admin API's `POST /admin/deliveries/retry`): dead ones, or pending ones made due now.
 */
const RETRYABLE = ['dead', 'pending'] as const;
const PAGE = 100;

/**
 * `/ui/deliveries`: deliveries by state and sink; retry one, or retry all that match after a page that says how
 * many (docs/reference.md#dashboard). The count comes from the store's per-sink counts, the ones /metrics reads.
 */
export function deliveriesPage(ctx: WebContext): Hono<WebEnv> {
  const filters = (c: Context<WebEnv>) => {
    const state = c.req.query('state');
    const sink = c.req.query('sink');
    return {
      state: (STATES as readonly string[]).includes(state ?? '') ? (state as State) : undefined,
      sink: sink !== undefined && ctx.sinkNames.includes(sink) ? sink : undefined,
    };
  };
  const retryable = (value: unknown) =>
    (RETRYABLE as readonly unknown[]).includes(value) ? (value as (typeof RETRYABLE)[number]) : undefined;

  return (
    new Hono<WebEnv>()
      .get('/', ctx.allow('viewer'), async (c) => {
        const { state, sink } = filters(c);
        const after = Number(c.req.query('after'));
        const { deliveries, next } = await ctx.deliveries.listDeliveries({
          state,
          sink,
          limit: PAGE,
          after: Number.isSafeInteger(after) && after > 0 ? after : undefined,
        });
        const n = Number(c.req.query('retried'));
        const done =
          Number.isSafeInteger(n) && n >= 0 ? `Retried ${n} ${n === 1 ? 'delivery' : 'deliveries'}.` : undefined;
        return c.render(
          <Deliveries
            ctx={ctx}
            state={state}
            sink={sink}
            deliveries={ctx.shown(deliveries)}
            next={next}
            first={c.req.query('after') === undefined}
            done={done}
          />,
          {
            title: 'Deliveries',
            section: 'deliveries',
          },
        );
      })
      // The page that asks before a bulk retry is the retry's form: the operator's.
      .get('/retry', ctx.allow('operator'), async (c) => {
        const { state, sink } = filters(c);
        const which = retryable(state ?? 'dead');
        if (!which)
          return c.redirect(
            `/ui/deliveries?${new URLSearchParams({ ...(state && { state }), ...(sink && { sink }) })}`,
            303,
          );
        const count = await ctx.deliveries.countRetryable({ state: which, sink });
        return c.render(<ConfirmRetry state={which} sink={sink} count={count} />, {
          title: 'Retry deliveries',
          section: 'deliveries',
        });
      })
      .post('/retry', ctx.allow('operator'), async (c) => {
        const form = await c.req.parseBody();
        const state = retryable(form.state);
        const sink = typeof form.sink === 'string' && form.sink !== '' ? form.sink : undefined;
        if (!state) throw new CallhookError('BAD_REQUEST', 'state: dead or pending');
        const { retried } = await ctx.act(c).deliveries.retryDeliveries({ state, sink });
        return c.redirect(
          `/ui/deliveries?${new URLSearchParams({ ...(sink && { sink }), retried: String(retried) })}`,
          303,
        );
      })
      .post('/:id/retry', ctx.allow('operator'), async (c) => {
        const { retried } = await ctx.act(c).deliveries.retryDelivery(c.req.param('id'));
        const back = (await c.req.parseBody()).back;
        // Only back to a page of the dashboard: the field is the form's, but a form can be forged.
        if (typeof back === 'string' && /^\/ui\/calls\/[A-Za-z0-9_-]+$/.test(back))
          return c.redirect(`${back}?done=retried&n=${retried}`, 303);
        return c.redirect(`/ui/deliveries?retried=${retried}`, 303);
      })
  );
}

export function DeliveryState({ state }: { state: State }) {
  const kind = state === 'done' ? 'ok' : state === 'dead' ? 'bad' : 'warn';
  return <Tag kind={kind}>{state === 'in_flight' ? 'in flight' : state}</Tag>;
}

function Deliveries(props: {
  ctx: WebContext;
  state?: State;
  sink?: string;
  deliveries: DeliveryInfo[];
  next: number | null;
  first: boolean;
  done?: string;
}) {
  const { ctx, state, sink, deliveries, done } = props;
  const retryState = state === undefined || state === 'dead' ? 'dead' : state === 'pending' ? 'pending' : undefined;
  const retryQuery = new URLSearchParams({ state: retryState ?? 'dead', ...(sink && { sink }) });
  return (
    <>
      <h1>Deliveries</h1>
      {done && <Note kind="ok">{done}</Note>}
      <form class="filters card" method="get" action="/ui/deliveries" aria-label="Filter deliveries">
        <FilterSelect
          name="state"
          label="State"
          choices={STATES}
          chosen={state}
          text={(s) => (s === 'in_flight' ? 'in flight' : s)}
        />
        <FilterSelect name="sink" label="Sink" choices={ctx.sinkNames} chosen={sink} />
        <div class="actions">
          <button type="submit">Filter</button>
        </div>
      </form>
      {retryState && (
        <Can needs="operator">
          <p>
            <a class="button secondary" href={`/ui/deliveries/retry?${retryQuery}`}>
              Retry all {retryState} deliveries{sink ? ` to ${sink}` : ''}…
            </a>
          </p>
        </Can>
      )}
      {deliveries.length === 0 ? (
        <Note kind="info">No delivery matches.</Note>
      ) : (
        <CardTable
          label="Deliveries"
          columns={['Call', 'Sink', 'State', { text: 'Attempts', num: true }, 'Last change', 'Last error', 'Action']}
        >
          {deliveries.map((d) => (
            <tr>
              <td data-label="Call">
                <a class="nowrap" href={`/ui/calls/${encodeURIComponent(d.callId)}`}>
                  {d.callId}
                </a>
              </td>
              <td data-label="Sink" class="nowrap">
                {d.sink}
              </td>
              <td data-label="State">
                <DeliveryState state={d.state} />
              </td>
              <td data-label="Attempts" class="num">
                {d.attempts}
              </td>
              <td data-label="Last change">
                <Time at={d.updatedAt} clock={ctx.clock} />
              </td>
              <td data-label="Last error">{d.lastError ?? ''}</td>
              <td data-label="Action">
                {d.state === 'dead' && (
                  <Can needs="operator">
                    <form class="inline" method="post" action={`/ui/deliveries/${d.id}/retry`}>
                      <button type="submit" class="secondary" aria-label={`Retry delivery ${d.id} to ${d.sink}`}>
                        Retry
                      </button>
                    </form>
                  </Can>
                )}
              </td>
            </tr>
          ))}
        </CardTable>
      )}
      <Pager path="/ui/deliveries" query={{ state, sink }} next={props.next} first={props.first} />
    </>
  );
}

function ConfirmRetry({ state, sink, count }: { state: 'dead' | 'pending'; sink?: string; count: number }) {
  const what = `${count} ${state} ${count === 1 ? 'delivery' : 'deliveries'}${sink ? ` to ${sink}` : ''}`;
  return (
    <>
      <h1>Retry deliveries</h1>
      {count === 0 ? (
        <Note kind="info">
          There are no {state} deliveries{sink ? ` to ${sink}` : ''} to retry.
        </Note>
      ) : (
        <form method="post" action="/ui/deliveries/retry" class="card">
          <p>
            This retries <strong>{what}</strong>: each is sent again now, with a fresh count of attempts (the attempts
            made so far stay in each call's history).
          </p>
          <input type="hidden" name="state" value={state} />
          {sink && <input type="hidden" name="sink" value={sink} />}
          <div class="actions">
            <button type="submit">Retry {what}</button>
            <a href="/ui/deliveries">Cancel</a>
          </div>
        </form>
      )}
    </>
  );
}
