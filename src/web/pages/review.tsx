import { Hono } from 'hono';
import type { StoredCall } from '../../store/store.js';
import { Note, Pager } from '../components.js';
import type { WebContext } from '../context.js';
import { CallTable } from './calls.js';

const PAGE = 50;

/**
 * `/ui/review`: the review queue (contract section 11): held calls and calls with problems not yet marked
 * reviewed, oldest first, so the call waiting longest is fixed first. Each opens on its own page, where it is
 * released or redelivered.
 */
export function reviewPage(ctx: WebContext): Hono {
  return new Hono().get('/', async (c) => {
    const after = c.req.query('after') || undefined;
    const calls = await ctx.store.listCalls({ review: true, order: 'asc', limit: PAGE, after });
    const next = calls.length === PAGE ? calls.at(-1)!.record.id : null;
    return c.render(<Review ctx={ctx} calls={ctx.shown(calls)} next={next} first={after === undefined} />, { title: 'Review queue', section: 'review' });
  });
}

function Review({ ctx, calls, next, first }: { ctx: WebContext; calls: StoredCall[]; next: string | null; first: boolean }) {
  return (
    <>
      <h1>Review queue</h1>
      <p class="muted">
        Held calls and calls whose fields have problems, oldest first. Open a call to see each field beside its problems; release a held call to send it to its sinks.
      </p>
      {calls.length === 0 ? <Note kind="ok">Nothing to review.</Note> : <CallTable ctx={ctx} calls={calls} label="Calls to review, oldest first" />}
      <Pager path="/ui/review" query={{}} next={next} first={first} />
    </>
  );
}
