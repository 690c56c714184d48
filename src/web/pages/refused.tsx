import { Hono } from 'hono';
import { type ReceiptJson, receiptJson } from '../../admin/receipts.js';
import { mayUse } from '../can.js';
import { Note, Pager, Pre, Scroll, Time } from '../components.js';
import type { WebContext, WebEnv } from '../context.js';

const PAGE = 25;

/**
 * `/ui/refused`: the requests refused after the key check (docs/reference.md#refused-requests: the sender never
 * retries, so each is a lost call until someone acts), newest first, each with its error, its raw body and a form that
 * runs it through intake again, as it came or corrected: the `body` prefilled with the raw body, a content type, one
 * button.
 */
export function refusedPage(ctx: WebContext): Hono<WebEnv> {
  return new Hono<WebEnv>()
    .get('/', ctx.allow('viewer'), async (c) => {
      const hook = c.req.query('hook') || undefined;
      const after = Number(c.req.query('after'));
      const page = await ctx.receipts.listReceipts({
        outcome: 'rejected',
        hook,
        order: 'desc',
        limit: PAGE,
        after: Number.isSafeInteger(after) && after > 0 ? after : undefined,
      });
      const receipts = ctx.shown(page.receipts.map((r) => receiptJson(r, ctx.maskBody)));
      const { next } = page;
      return c.render(
        <Refused receipts={receipts} ctx={ctx} hook={hook} next={next} first={c.req.query('after') === undefined} />,
        { title: 'Refused requests', section: 'refused' },
      );
    })
    .post('/:id/ingest', ctx.allow('operator'), async (c) => {
      const id = c.req.param('id');
      const form = await c.req.parseBody();
      // A form posts text; the body is the text area's as the operator left it (a browser sends its line ends as CRLF).
      const body = typeof form.body === 'string' ? new TextEncoder().encode(form.body) : undefined;
      const contentType = typeof form.content_type === 'string' ? form.content_type.trim() || null : undefined;
      // The intake it goes through wakes the delivery worker itself (intake/intake.ts).
      const { reply } = await ctx.act(c).receipts.ingestReceipt(id, { body, contentType });
      return c.redirect(`/ui/calls/${encodeURIComponent(reply.id)}?done=ingested`, 303);
    });
}

function Refused({
  ctx,
  receipts,
  hook,
  next,
  first,
}: {
  ctx: WebContext;
  receipts: ReceiptJson[];
  hook?: string;
  next: number | null;
  first: boolean;
}) {
  return (
    <>
      <h1>Refused requests</h1>
      <p class="muted">
        Requests that passed the key check but were refused (a body that could not be read, a content type not taken).
        The sender never retries: fix the body if need be, and ingest it. The call is stored with source "recovered".
      </p>
      {receipts.length === 0 && <Note kind="info">No refused request{hook ? ` on ${hook}` : ''}.</Note>}
      {receipts.map((r) => (
        <section class="card" aria-labelledby={`receipt-${r.id}`}>
          <h2 id={`receipt-${r.id}`}>
            Request {r.id} to {r.hook}
          </h2>
          <Scroll label={`Request ${r.id}`}>
            <table>
              <tbody>
                <tr>
                  <th scope="row">Received</th>
                  <td>
                    <Time at={r.receivedAt} clock={ctx.clock} />
                  </td>
                </tr>
                <tr>
                  <th scope="row">Status</th>
                  <td>{r.status}</td>
                </tr>
                <tr>
                  <th scope="row">Error</th>
                  <td class="problem">{r.error ?? ''}</td>
                </tr>
                <tr>
                  <th scope="row">Content type</th>
                  <td>{r.contentType ?? <span class="muted">none</span>}</td>
                </tr>
              </tbody>
            </table>
          </Scroll>
          {r.ingestedAs ? (
            <p>
              Ingested as <a href={`/ui/calls/${encodeURIComponent(r.ingestedAs)}`}>call {r.ingestedAs}</a>.
            </p>
          ) : r.rawBodyBase64 !== undefined ? (
            <>
              <p class="muted">The body is not UTF-8 text; as received, in base64:</p>
              <Pre value={r.rawBodyBase64} label={`Body of request ${r.id}, base64`} />
              <p class="muted">
                Ingest it with the admin API or the CLI (`callhook receipts ingest {r.id}`), which take bytes.
              </p>
            </>
          ) : r.rawBody === undefined ? (
            <p class="muted">No body was kept (refused before it was read).</p>
          ) : !mayUse('operator') ? (
            // A viewer reads the body as it came, without the form that would ingest it.
            <Pre value={r.rawBody} label={`Body of request ${r.id}`} />
          ) : (
            <form method="post" action={`/ui/refused/${r.id}/ingest`}>
              <label for={`body-${r.id}`}>Body</label>
              <textarea id={`body-${r.id}`} name="body" rows={8}>
                {r.rawBody}
              </textarea>
              <div class="actions">
                <div>
                  <label for={`type-${r.id}`}>Content type</label>
                  <input id={`type-${r.id}`} name="content_type" value={r.contentType ?? ''} />
                </div>
                <button type="submit">Ingest request {r.id}</button>
              </div>
            </form>
          )}
        </section>
      ))}
      <Pager path="/ui/refused" query={{ hook }} next={next} first={first} />
    </>
  );
}
