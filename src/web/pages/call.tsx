import { Hono, type Context } from 'hono';
import { receiptJson, type ReceiptJson } from '../../admin/receipts.js';
import { CallhookError } from '../../errors.js';
import { releaseHeld, sinksWanting } from '../../intake.js';
import type { Problem } from '../../record.js';
import type { AttemptInfo, DeliveryInfo, StoredCall } from '../../store/store.js';
import { Note, Pre, Scroll, Tag, Time } from '../components.js';
import type { WebContext } from '../context.js';
import { DeliveryState } from './deliveries.js';

/**
 * `/ui/calls/<id>`: one call whole (contract section 11): every field with its problems beside it, `extra`, the raw
 * request, every receipt, every delivery with its attempts; and what can be done to it: redeliver, release.
 */
export function callPage(ctx: WebContext): Hono {
  const callOr404 = async (id: string) => {
    const call = await ctx.store.getCall(id);
    if (!call) throw new CallhookError('NOT_FOUND', `no call with id ${id}`);
    return call;
  };
  const back = (c: Context, id: string, done: string) => c.redirect(`/ui/calls/${encodeURIComponent(id)}?${done}`, 303);

  return new Hono()
    .get('/:id', async (c) => {
      const id = c.req.param('id');
      const call = await callOr404(id);
      const [receipts, deliveries, attempts] = await Promise.all([ctx.store.listReceipts(id), ctx.store.listDeliveries({ callId: id, limit: 500 }), ctx.store.listAttempts(id)]);
      const view = ctx.shown({ call, receipts: receipts.map((r) => receiptJson(r, ctx.maskBody)), deliveries, attempts });
      return c.render(<Call ctx={ctx} {...view} done={doneMessage(c)} />, { title: `Call ${id}`, section: 'calls' });
    })
    .post('/:id/redeliver', async (c) => {
      const id = c.req.param('id');
      const call = await callOr404(id);
      const sink = String((await c.req.parseBody()).sink ?? '');
      if (sink !== '' && !ctx.sinkNames.includes(sink)) throw new CallhookError('BAD_REQUEST', `no sink is named ${sink}`);
      // Without a name: every sink of the call's hook that wants it, as when it was first stored (as the admin API).
      const scheduled = (await ctx.store.redeliver(id, sink === '' ? sinksWanting(ctx.hooks, call.record) : [sink])) ?? 0;
      if (scheduled > 0) ctx.notify();
      return back(c, id, `done=redelivered&n=${scheduled}`);
    })
    .post('/:id/release', async (c) => {
      const id = c.req.param('id');
      const targets = await releaseHeld(ctx.store, ctx.hooks, (await callOr404(id)).record);
      if (!targets) throw new CallhookError('CONFLICT', `call ${id} is not held`);
      ctx.notify();
      return back(c, id, `done=released&n=${targets.length}`);
    });
}

function doneMessage(c: Context): string | undefined {
  const n = Number(c.req.query('n') ?? 0);
  if (!Number.isSafeInteger(n) || n < 0) return undefined;
  const deliveries = `${n} ${n === 1 ? 'delivery' : 'deliveries'}`;
  switch (c.req.query('done')) {
    case 'redelivered':
      return n === 0 ? 'Nothing to redeliver: the deliveries asked for are pending or in flight already.' : `Redelivery scheduled: ${deliveries}.`;
    case 'released':
      return `Released to ${n} ${n === 1 ? 'sink' : 'sinks'}.`;
    case 'ingested':
      return 'The refused request was ingested: this is the call it became.';
    case 'retried':
      return `Retried ${deliveries}.`;
    default:
      return undefined;
  }
}

interface CallView {
  call: StoredCall;
  receipts: ReceiptJson[];
  deliveries: DeliveryInfo[];
  attempts: AttemptInfo[];
}

function Call({ ctx, call: { record, status, raw, duplicates }, receipts, deliveries, attempts, done }: CallView & { ctx: WebContext; done?: string }) {
  const hook = ctx.hooks.get(record.hook);
  const declared = hook?.config.parameters.map((p) => p.identifier) ?? [];
  const fields = [...new Set([...declared, ...Object.keys(record.data), ...record.problems.map((p) => p.field)])];
  const problemsOf = (field: string) => record.problems.filter((p) => p.field === field);
  const name = [record.data.first_name, record.data.last_name].filter((v) => v !== undefined && v !== '').join(' ');
  const required = new Set(hook?.config.parameters.filter((p) => p.required).map((p) => p.identifier));
  return (
    <>
      <h1>Call {name ? `from ${name}` : record.id}</h1>
      {done && <Note kind="ok">{done}</Note>}
      <dl class="stats">
        <div>
          <dt>Status</dt>
          <dd>{status === 'held' ? <Tag kind="warn">held</Tag> : <Tag kind="ok">accepted</Tag>}</dd>
        </div>
        <div>
          <dt>Received</dt>
          <dd class="small">
            <Time at={record.received_at} clock={ctx.clock} />
          </dd>
        </div>
        <div>
          <dt>Hook · source</dt>
          <dd class="small">
            {record.hook} · {record.source}
          </dd>
        </div>
        <div>
          <dt>Revision · duplicates</dt>
          <dd class="small">
            {record.revision} · {duplicates}
          </dd>
        </div>
      </dl>
      <p class="muted">
        Id <code>{record.id}</code>
        {record.dedup_key !== null && (
          <>
            {' '}
            · dedup key <code>{record.dedup_key}</code>
          </>
        )}
        {record.conflicts_with && (
          <>
            {' '}
            · same key as <a href={`/ui/calls/${encodeURIComponent(record.conflicts_with)}`}>{record.conflicts_with}</a>
          </>
        )}
      </p>

      <h2>Actions</h2>
      <div class="actions card">
        {status === 'held' && (
          <form method="post" action={`/ui/calls/${encodeURIComponent(record.id)}/release`}>
            <button type="submit">Release to its sinks</button>
          </form>
        )}
        <form method="post" action={`/ui/calls/${encodeURIComponent(record.id)}/redeliver`}>
          <div>
            <label for="redeliver-sink">Redeliver to</label>
            <select id="redeliver-sink" name="sink">
              <option value="">every sink that wants it</option>
              {ctx.sinkNames.map((sink) => (
                <option value={sink}>{sink}</option>
              ))}
            </select>
          </div>
          <button type="submit" class="secondary">
            Redeliver
          </button>
        </form>
      </div>

      <h2>Fields</h2>
      <Scroll label="Fields">
        <table>
          <thead>
            <tr>
              <th scope="col">Field</th>
              <th scope="col">Value</th>
              <th scope="col">Problems</th>
            </tr>
          </thead>
          <tbody>
            {fields.map((field) => (
              <tr>
                <th scope="row" class="nowrap">
                  {field}
                  {required.has(field) && <span class="muted"> (required)</span>}
                </th>
                <td>{field in record.data ? String(record.data[field]) : <span class="muted">—</span>}</td>
                <td>
                  {problemsOf(field).map((p) => (
                    <ProblemText problem={p} />
                  ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </Scroll>

      <h2>Extra</h2>
      {Object.keys(record.extra).length === 0 ? <p class="muted">No undeclared fields.</p> : <Pre value={record.extra} label="Extra fields" />}

      <h2>Raw request</h2>
      <p class="muted">
        {raw.method} · {raw.content_type ?? 'no content type'}
        {Object.keys(raw.query).length > 0 && <> · query {queryText(raw.query)}</>}
      </p>
      <Pre value={raw.body} label="Raw request body" />

      <h2>Receipts</h2>
      <Scroll label="Receipts">
        <table>
          <thead>
            <tr>
              <th scope="col">Received</th>
              <th scope="col">Outcome</th>
              <th scope="col" class="num">
                Status
              </th>
              <th scope="col">Content type</th>
              <th scope="col" class="num">
                Bytes
              </th>
              <th scope="col">Body or error</th>
            </tr>
          </thead>
          <tbody>
            {receipts.map((r) => (
              <tr>
                <td>
                  <Time at={r.receivedAt} clock={ctx.clock} />
                </td>
                <td>{r.outcome}</td>
                <td class="num">{r.status}</td>
                <td>{r.contentType ?? ''}</td>
                <td class="num">{r.size}</td>
                <td>
                  {r.error && <div class="problem">{r.error}</div>}
                  {(r.rawBody ?? r.rawBodyBase64) !== undefined && (
                    <details>
                      <summary>{r.rawBody !== undefined ? 'Body as received' : 'Body as received (base64)'}</summary>
                      <Pre value={r.rawBody ?? r.rawBodyBase64} label={`Body of receipt ${r.id}`} />
                    </details>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </Scroll>

      <h2>Deliveries</h2>
      {deliveries.length === 0 && <p class="muted">No delivery{status === 'held' ? ': a held call goes to its sinks when it is released.' : '.'}</p>}
      {deliveries.map((d) => (
        <Delivery ctx={ctx} delivery={d} attempts={attempts.filter((a) => a.deliveryId === d.id)} />
      ))}
    </>
  );
}

function queryText(query: Record<string, string | string[]>): string {
  return new URLSearchParams(Object.entries(query).flatMap(([k, v]): [string, string][] => (Array.isArray(v) ? v.map((x) => [k, x]) : [[k, v]]))).toString();
}

function ProblemText({ problem }: { problem: Problem }) {
  return (
    <div class="problem">
      <Tag kind="bad">{problem.code}</Tag> {problem.message}
      {problem.value !== undefined && <> (received: {typeof problem.value === 'string' ? problem.value : JSON.stringify(problem.value)})</>}
    </div>
  );
}

function Delivery({ ctx, delivery: d, attempts }: { ctx: WebContext; delivery: DeliveryInfo; attempts: AttemptInfo[] }) {
  return (
    <section class="card" aria-label={`Delivery to ${d.sink}`}>
      <h3>
        To {d.sink} <DeliveryState state={d.state} />
      </h3>
      <p class="muted">
        {d.attempts} {d.attempts === 1 ? 'attempt' : 'attempts'} since it was last scheduled
        {d.state === 'pending' && (
          <>
            {' '}
            · next at <Time at={d.nextAttemptAt} clock={ctx.clock} />
          </>
        )}
        {d.lastError && <> · last error: {d.lastError}</>}
      </p>
      {d.state === 'dead' && (
        <form method="post" action={`/ui/deliveries/${d.id}/retry`}>
          <input type="hidden" name="back" value={`/ui/calls/${d.callId}`} />
          <button type="submit">Retry this delivery</button>
        </form>
      )}
      {attempts.length > 0 && (
        <Scroll label={`Attempts of the delivery to ${d.sink}`}>
          <table>
            <thead>
              <tr>
                <th scope="col" class="num">
                  #
                </th>
                <th scope="col">Started</th>
                <th scope="col" class="num">
                  ms
                </th>
                <th scope="col">Outcome</th>
                <th scope="col" class="num">
                  HTTP
                </th>
                <th scope="col">Error or note</th>
              </tr>
            </thead>
            <tbody>
              {attempts.map((a) => (
                <tr>
                  <td class="num">{a.attempt}</td>
                  <td>
                    <Time at={a.startedAt} clock={ctx.clock} />
                  </td>
                  <td class="num">{a.durationMs}</td>
                  <td>{a.outcome === 'ok' ? <Tag kind="ok">ok</Tag> : a.outcome === 'retry' ? <Tag kind="warn">retry</Tag> : <Tag kind="bad">dead</Tag>}</td>
                  <td class="num">{a.httpStatus ?? ''}</td>
                  <td>{a.error ?? a.note ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </Scroll>
      )}
    </section>
  );
}
