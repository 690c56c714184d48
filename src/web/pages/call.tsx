import { type Context, Hono } from 'hono';
import { type ReceiptJson, receiptJson } from '../../admin/receipts.js';
import { isTestTraffic, type Problem } from '../../record.js';
import type { AttemptInfo, CallEdit, DeliveryInfo, StoredCall } from '../../store/admin-queries.js';
import { Can } from '../can.js';
import { CardTable, Note, Pre, Tag, Time } from '../components.js';
import type { WebContext, WebEnv } from '../context.js';
import { DeliveryState } from './deliveries.js';

/**
 * `/ui/calls/<id>`: one call whole (docs/reference.md#dashboard): every field with its problems beside it, `extra`, the
 * raw request, every receipt, every delivery with its attempts; and what can be done to it: redeliver, release.
 */
export function callPage(ctx: WebContext): Hono<WebEnv> {
  const back = (c: Context<WebEnv>, id: string, done: string) =>
    c.redirect(`/ui/calls/${encodeURIComponent(id)}?${done}`, 303);

  return new Hono<WebEnv>()
    .get('/:id', ctx.allow('viewer'), async (c) => {
      const id = c.req.param('id');
      const { receipts, deliveries, attempts, edits, ...call } = await ctx.calls.showCall(id);
      const view = ctx.shown({
        call,
        receipts: receipts.map((r) => receiptJson(r, ctx.maskBody)),
        deliveries,
        attempts,
        edits,
      });
      return c.render(<Call ctx={ctx} {...view} done={doneMessage(c)} />, { title: `Call ${id}`, section: 'calls' });
    })
    .post('/:id/redeliver', ctx.allow('operator'), async (c) => {
      const id = c.req.param('id');
      const sink = String((await c.req.parseBody()).sink ?? '');
      // Without a name: every sink of the call's hook that wants it, as when it was first stored (as the admin API).
      const { scheduled } = await ctx.act(c).calls.redeliverCall(id, sink === '' ? undefined : [sink]);
      return back(c, id, `done=redelivered&n=${scheduled}`);
    })
    .post('/:id/release', ctx.allow('operator'), async (c) => {
      const id = c.req.param('id');
      const { sinks } = await ctx.act(c).calls.releaseCall(id);
      return back(c, id, `done=released&n=${sinks.length}`);
    });
}

function doneMessage(c: Context): string | undefined {
  const n = Number(c.req.query('n') ?? 0);
  const fields = Number(c.req.query('fields') ?? 0);
  if (!Number.isSafeInteger(n) || n < 0 || !Number.isSafeInteger(fields) || fields < 0) return undefined;
  const deliveries = `${n} ${n === 1 ? 'delivery' : 'deliveries'}`;
  const saved = fields === 0 ? 'No field changed' : `Saved ${fields} ${fields === 1 ? 'field' : 'fields'}`;
  switch (c.req.query('done')) {
    case 'edited':
      return `${saved}.`;
    case 'edited-released':
      return `${saved}; released to ${n} ${n === 1 ? 'sink' : 'sinks'}.`;
    case 'edited-redelivered':
      return `${saved}; redelivery scheduled: ${deliveries}.`;
    case 'reviewed':
      return 'Marked reviewed: the call leaves the review queue.';
    case 'redelivered':
      return n === 0
        ? 'Nothing to redeliver: the deliveries asked for are pending or in flight already.'
        : `Redelivery scheduled: ${deliveries}.`;
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
  edits: CallEdit[];
}

function Call({
  ctx,
  call: { record, status, raw, duplicates },
  receipts,
  deliveries,
  attempts,
  edits,
  done,
}: CallView & { ctx: WebContext; done?: string }) {
  const reviewed = edits.some((e) => e.reviewed && e.revision === record.revision);
  const hook = ctx.hooks.get(record.hook);
  const declared = hook?.config.parameters.map((p) => p.identifier) ?? [];
  const fields = [...new Set([...declared, ...Object.keys(record.data), ...record.problems.map((p) => p.field)])];
  const problemsOf = (field: string) => record.problems.filter((p) => p.field === field);
  const name = [record.data.first_name, record.data.last_name].filter((v) => v !== undefined && v !== '').join(' ');
  const required = new Set(hook?.config.parameters.filter((p) => p.required).map((p) => p.identifier));
  // docs/reference.md#test-traffic: said plainly, and redelivered only to the sinks that take it.
  const test = isTestTraffic(record.source);
  return (
    <>
      <h1>Call {name ? `from ${name}` : record.id}</h1>
      {done && <Note kind="ok">{done}</Note>}
      {test && (
        <Note kind="info">
          A test call: <code>callhook {record.source}</code> sent it (source {record.source}). It is kept like any call,
          but goes only to the sinks that take test traffic, and the overview, the review queue and the calls list leave
          it out.
        </Note>
      )}
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
          <dt>Sent by</dt>
          {/* docs/reference.md#other-voice-platforms: the record names the platform; none is the calling service. */}
          <dd class="small">{record.platform ?? 'the calling service'}</dd>
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

      <Can needs="operator">
        <h2>Actions</h2>
        <div class="actions card">
          <a class="button secondary" href={`/ui/calls/${encodeURIComponent(record.id)}/edit`}>
            Edit fields
          </a>
          {record.problems.length > 0 && !reviewed && (
            <form method="post" action={`/ui/calls/${encodeURIComponent(record.id)}/reviewed`}>
              <button type="submit" class="secondary">
                Mark reviewed
              </button>
            </form>
          )}
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
                {(test ? ctx.testSinks : ctx.sinkNames).map((sink) => (
                  <option value={sink}>{sink}</option>
                ))}
              </select>
            </div>
            <button type="submit" class="secondary">
              Redeliver
            </button>
          </form>
        </div>
      </Can>

      <h2>Fields</h2>
      <CardTable label="Fields" columns={['Field', 'Value', 'Problems']}>
        {fields.map((field) => (
          <tr>
            <th scope="row" data-label="Field">
              <span>
                {field}
                {required.has(field) && <span class="muted req"> (required)</span>}
              </span>
            </th>
            <td data-label="Value">
              {field in record.data ? String(record.data[field]) : <span class="muted">—</span>}
            </td>
            <td data-label="Problems">
              {problemsOf(field).length > 0 && (
                <div>
                  {problemsOf(field).map((p) => (
                    <ProblemText problem={p} />
                  ))}
                </div>
              )}
            </td>
          </tr>
        ))}
      </CardTable>

      <h2>Edits</h2>
      {edits.length === 0 ? (
        <p class="muted">Not edited: the record is as received.</p>
      ) : (
        <EditHistory ctx={ctx} edits={edits} />
      )}

      <h2>Extra</h2>
      {Object.keys(record.extra).length === 0 ? (
        <p class="muted">No undeclared fields.</p>
      ) : (
        <Pre value={record.extra} label="Extra fields" />
      )}

      <h2>Raw request</h2>
      <p class="muted">
        {raw.method} · {raw.content_type ?? 'no content type'}
        {Object.keys(raw.query).length > 0 && <> · query {queryText(raw.query)}</>}
      </p>
      {raw.retention?.dropped === undefined ? (
        <Pre value={raw.body} label="Raw request body" />
      ) : (
        <Note kind="info">
          Body and query dropped by retention <Time at={raw.retention.dropped} clock={ctx.clock} /> (
          <a href="/ui">what is kept how long</a>).
        </Note>
      )}
      {raw.retention?.fields && (
        <p class="muted" id="removed-fields">
          Removed by retention from this call (data, extra, edits, request, receipts): {raw.retention.fields.join(', ')}
          .
        </p>
      )}

      <h2>Receipts</h2>
      <CardTable
        label="Receipts"
        columns={[
          'Received',
          'Outcome',
          { text: 'Status', num: true },
          'Content type',
          { text: 'Bytes', num: true },
          'Body or error',
        ]}
      >
        {receipts.map((r) => (
          <tr>
            <td data-label="Received">
              <Time at={r.receivedAt} clock={ctx.clock} />
            </td>
            <td data-label="Outcome">{r.outcome}</td>
            <td data-label="Status" class="num">
              {r.status}
            </td>
            <td data-label="Content type">{r.contentType ?? ''}</td>
            <td data-label="Bytes" class="num">
              {r.size}
            </td>
            <td data-label="Body or error">
              <div>
                {r.error && <div class="problem">{r.error}</div>}
                {(r.rawBody ?? r.rawBodyBase64) !== undefined && (
                  <details>
                    <summary>{r.rawBody !== undefined ? 'Body as received' : 'Body as received (base64)'}</summary>
                    <Pre value={r.rawBody ?? r.rawBodyBase64} label={`Body of receipt ${r.id}`} />
                  </details>
                )}
              </div>
            </td>
          </tr>
        ))}
      </CardTable>

      <h2>Deliveries</h2>
      {deliveries.length === 0 && (
        <p class="muted">
          No delivery{status === 'held' ? ': a held call goes to its sinks when it is released.' : '.'}
        </p>
      )}
      {deliveries.map((d) => (
        <Delivery ctx={ctx} delivery={d} attempts={attempts.filter((a) => a.deliveryId === d.id)} />
      ))}
    </>
  );
}

function EditHistory({ ctx, edits }: { ctx: WebContext; edits: CallEdit[] }) {
  const shown = (value: unknown) =>
    value === undefined ? '—' : typeof value === 'string' ? value : JSON.stringify(value);
  return (
    <CardTable label="Edits" columns={['When', 'By', 'Revision', 'Field', 'Before', 'After']}>
      {edits.flatMap((edit) =>
        edit.reviewed
          ? [
              <tr>
                <td data-label="When">
                  <Time at={edit.at} clock={ctx.clock} />
                </td>
                <By edit={edit} />
                <td data-label="Revision">{edit.revision}</td>
                <td data-label="Field" colspan={3}>
                  marked reviewed
                </td>
              </tr>,
            ]
          : Object.entries(edit.fields).map(([field, change]) => (
              <tr>
                <td data-label="When">
                  <Time at={edit.at} clock={ctx.clock} />
                </td>
                <By edit={edit} />
                <td data-label="Revision">{edit.revision}</td>
                <td data-label="Field">{field}</td>
                {change.removed ? (
                  <td data-label="Before and after" colspan={2} class="muted">
                    removed by retention
                  </td>
                ) : (
                  <>
                    <td data-label="Before">{shown(change.before)}</td>
                    <td data-label="After">{shown(change.after)}</td>
                  </>
                )}
              </tr>
            )),
      )}
    </CardTable>
  );
}

/** Who made an edit (docs/reference.md#audit-log); an edit kept before people signed in as themselves names nobody. */
function By({ edit }: { edit: CallEdit & { by?: string } }) {
  return <td data-label="By">{edit.by ?? <span class="muted">—</span>}</td>;
}

function queryText(query: Record<string, string | string[]>): string {
  return new URLSearchParams(
    Object.entries(query).flatMap(([k, v]): [string, string][] => (Array.isArray(v) ? v.map((x) => [k, x]) : [[k, v]])),
  ).toString();
}

function ProblemText({ problem }: { problem: Problem }) {
  return (
    <div class="problem">
      <Tag kind="bad">{problem.code}</Tag> {problem.message}
      {problem.value !== undefined && (
        <> (received: {typeof problem.value === 'string' ? problem.value : JSON.stringify(problem.value)})</>
      )}
    </div>
  );
}

function Delivery({
  ctx,
  delivery: d,
  attempts,
}: {
  ctx: WebContext;
  delivery: DeliveryInfo;
  attempts: AttemptInfo[];
}) {
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
        <Can needs="operator">
          <form method="post" action={`/ui/deliveries/${d.id}/retry`}>
            <input type="hidden" name="back" value={`/ui/calls/${d.callId}`} />
            <button type="submit">Retry this delivery</button>
          </form>
        </Can>
      )}
      {attempts.length > 0 && (
        <CardTable
          label={`Attempts of the delivery to ${d.sink}`}
          columns={[
            { text: '#', num: true },
            'Started',
            { text: 'ms', num: true },
            'Outcome',
            { text: 'HTTP', num: true },
            'Error or note',
          ]}
        >
          {attempts.map((a) => (
            <tr>
              <td data-label="#" class="num">
                {a.attempt}
              </td>
              <td data-label="Started">
                <Time at={a.startedAt} clock={ctx.clock} />
              </td>
              <td data-label="ms" class="num">
                {Math.round(a.durationMs)}
              </td>
              <td data-label="Outcome">
                {a.outcome === 'ok' ? (
                  <Tag kind="ok">ok</Tag>
                ) : a.outcome === 'retry' ? (
                  <Tag kind="warn">retry</Tag>
                ) : (
                  <Tag kind="bad">dead</Tag>
                )}
              </td>
              <td data-label="HTTP" class="num">
                {a.httpStatus ?? ''}
              </td>
              <td data-label="Error or note">{a.error ?? a.note ?? ''}</td>
            </tr>
          ))}
        </CardTable>
      )}
    </section>
  );
}
