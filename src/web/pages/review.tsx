import { Hono } from 'hono';
import type { StoredCall } from '../../store/admin-queries.js';
import { Note, Pager } from '../components.js';
import type { WebContext, WebEnv } from '../context.js';
import { CallTable } from './calls.js';

const PAGE = 50;

/**
 * `/ui/review`: the review queue (docs/reference.md#dashboard): held calls and calls with problems not yet marked
 * reviewed, oldest first, so the call waiting longest is fixed first. Each opens on its own page, where it is
 * released or redelivered.
 */
export function reviewPage(ctx: WebContext): Hono<WebEnv> {
  return new Hono<WebEnv>().get('/', ctx.allow('viewer'), async (c) => {
    const after = c.req.query('after') || undefined;
    const { calls, next } = await ctx.calls.reviewQueue({ limit: PAGE, after });
    return c.render(<Review ctx={ctx} calls={ctx.shown(calls)} next={next} first={after === undefined} />, {
      title: 'Review queue',
      section: 'review',
    });
  });
}

function Review({
  ctx,
  calls,
  next,
  first,
}: {
  ctx: WebContext;
  calls: StoredCall[];
  next: string | null;
  first: boolean;
}) {
  return (
    <>
      <h1>Review queue</h1>
      <p class="muted">
        Held calls and calls whose fields have problems, oldest first. Open a call to see each field beside its
        problems: edit what the AI got wrong and save (a held call with "Save and release"), or mark a call that needs
        no change reviewed. A call leaves the queue once it is released and has no problem left, or is marked reviewed.
      </p>
      {calls.length === 0 ? (
        <Note kind="ok">Nothing to review.</Note>
      ) : (
        <CallTable ctx={ctx} calls={calls} label="Calls to review, oldest first" />
      )}
      <Pager path="/ui/review" query={{}} next={next} first={first} />
    </>
  );
}
