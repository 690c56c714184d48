import { Hono } from 'hono';
import type { IncidentOperations, IncidentView } from '../../admin/incidents.js';
import { RULE_NAMES, type RuleName } from '../../alerts/config.js';
import { countsText } from '../../alerts/message.js';
import { Can } from '../can.js';
import { CardTable, FilterSelect, Note, Pager, Tag, Time } from '../components.js';
import type { WebContext, WebEnv } from '../context.js';
import { incidentName } from '../incident-banner.js';
import { age } from '../time.js';
import { DeliveryState } from './deliveries.js';

const PAGE = 25;
const STATES = ['open', 'resolved'] as const;
type State = (typeof STATES)[number];

/**
 * `/ui/incidents`: the alerts' incidents (docs/reference.md#alerts and docs/reference.md#dashboard), the open ones
 * first and then the resolved, each newest first, with what it counted, who acknowledged it, and where each of its
 * messages is: an alert message that went dead tells no channel and raises nothing, so this page is where it shows.
 * An open incident is acknowledged here through the same operation as `POST /admin/incidents/<id>/ack`.
 */
export function incidentsPage(ctx: WebContext): Hono<WebEnv> {
  return new Hono<WebEnv>()
    .get('/', ctx.allow('viewer'), async (c) => {
      const state = oneOf(STATES, c.req.query('state'));
      const rule = oneOf(RULE_NAMES, c.req.query('rule'));
      const page = await openFirst(ctx.incidents, { state, rule, after: c.req.query('after'), limit: PAGE });
      const incidents = ctx.shown(page.incidents);
      // The notice is made of the incident as listed, never of text from the URL.
      const acknowledged =
        c.req.query('done') === 'acknowledged' ? incidents.find((i) => i.id === c.req.query('incident')) : undefined;
      return c.render(
        <Incidents
          ctx={ctx}
          state={state}
          rule={rule}
          incidents={incidents}
          next={page.next}
          first={c.req.query('after') === undefined}
          acknowledged={acknowledged}
        />,
        { title: 'Incidents', section: 'incidents' },
      );
    })
    .post('/:id/ack', ctx.allow('operator'), async (c) => {
      const id = c.req.param('id');
      // 404 for no such incident, 409 for one resolved meanwhile: the dashboard's error page says which.
      await ctx.act(c).incidents.acknowledge(id, c.get('actor').name);
      const query = new URLSearchParams({ done: 'acknowledged', incident: id });
      return c.redirect(`/ui/incidents?${query}#incident-${encodeURIComponent(id)}`, 303);
    });
}

const oneOf = <T extends string>(values: readonly T[], value: string | undefined): T | undefined =>
  (values as readonly string[]).includes(value ?? '') ? (value as T) : undefined;

/**
 * One page of incidents, the open ones first (each state newest first, as the store lists them), and where the next
 * page begins: `open.<id>` or `resolved.<id>` (after that incident), `resolved` (at the first resolved one), or null
 * on the last page. An `after` this did not make begins at the first page.
 */
export async function openFirst(
  incidents: Pick<IncidentOperations, 'list'>,
  { state, rule, after, limit }: { state?: State; rule?: RuleName; after?: string; limit: number },
): Promise<{ incidents: IncidentView[]; next: string | null }> {
  const states: readonly State[] = state ? [state] : STATES;
  const cursor = /^(open|resolved)(?:\.([0-9A-Za-z-]{1,64}))?$/.exec(after ?? '');
  const from = Math.max(0, states.indexOf(cursor?.[1] as State));
  const shown: IncidentView[] = [];
  for (let i = from; i < states.length; i++) {
    const at = states[i]!;
    if (shown.length === limit) {
      // The page is full at the end of a state: a next page only when the following state has any.
      const more = await incidents.list({ state: at, rule, limit: 1 });
      return { incidents: shown, next: more.incidents.length > 0 ? at : null };
    }
    const page = await incidents.list({
      state: at,
      rule,
      limit: limit - shown.length,
      after: i === from && cursor?.[1] === at ? cursor[2] : undefined,
    });
    shown.push(...page.incidents);
    if (page.next !== null) return { incidents: shown, next: `${at}.${page.next}` };
  }
  return { incidents: shown, next: null };
}

function Incidents(props: {
  ctx: WebContext;
  state?: State;
  rule?: RuleName;
  incidents: IncidentView[];
  next: string | null;
  first: boolean;
  acknowledged?: IncidentView;
}) {
  const { ctx, state, rule, incidents, first, acknowledged } = props;
  const open = incidents.filter((i) => i.state === 'open');
  const resolved = incidents.filter((i) => i.state === 'resolved');
  const forRule = rule ? ` of ${rule}` : '';
  return (
    <>
      <h1>Incidents</h1>
      {acknowledged && (
        <Note kind="ok">
          {incidentName(acknowledged)} is acknowledged by {acknowledged.acknowledged_by}; it stays open until it
          resolves.
        </Note>
      )}
      <p class="muted">
        An alert rule opens an incident when something goes wrong, and resolves it when it is over. Acknowledging an
        open incident says that someone is on it: it stays open, and shows who.
      </p>
      <form class="filters card" method="get" action="/ui/incidents" aria-label="Filter incidents">
        <FilterSelect name="state" label="State" choices={STATES} chosen={state} />
        <FilterSelect name="rule" label="Rule" choices={RULE_NAMES} chosen={rule} />
        <div class="actions">
          <button type="submit">Filter</button>
        </div>
      </form>
      {(open.length > 0 || (first && state !== 'resolved')) && (
        <>
          <h2>Open</h2>
          {open.length === 0 && <Note kind="info">No incident{forRule} is open.</Note>}
          {open.map((incident) => (
            <IncidentCard ctx={ctx} incident={incident} />
          ))}
        </>
      )}
      {(resolved.length > 0 || (first && state === 'resolved')) && (
        <>
          <h2>Resolved</h2>
          {resolved.length === 0 && <Note kind="info">No incident{forRule} has resolved.</Note>}
          {resolved.map((incident) => (
            <IncidentCard ctx={ctx} incident={incident} />
          ))}
        </>
      )}
      <Pager path="/ui/incidents" query={{ state, rule }} next={props.next} first={first} />
    </>
  );
}

function IncidentCard({ ctx, incident }: { ctx: WebContext; incident: IncidentView }) {
  const id = `incident-${incident.id}`;
  const name = incidentName(incident);
  const opened = Date.parse(incident.opened_at);
  return (
    <section class="card incident" id={id} aria-labelledby={`${id}-name`}>
      <h3 id={`${id}-name`}>
        {name} {incident.state === 'open' ? <Tag kind="bad">open</Tag> : <Tag kind="ok">resolved</Tag>}{' '}
        {incident.acknowledged_at !== null && <Tag kind="plain">acknowledged</Tag>}
      </h3>
      <p>{incident.summary}</p>
      <dl class="facts">
        <div>
          <dt>Opened</dt>
          <dd>
            <Time at={incident.opened_at} clock={ctx.clock} />
          </dd>
        </div>
        <div>
          <dt>Last event</dt>
          <dd>
            <Time at={incident.last_event} clock={ctx.clock} />
          </dd>
        </div>
        {incident.resolved_at === null ? (
          <div>
            <dt>Open for</dt>
            <dd>{age((Date.now() - opened) / 1000)}</dd>
          </div>
        ) : (
          <>
            <div>
              <dt>Resolved</dt>
              <dd>
                <Time at={incident.resolved_at} clock={ctx.clock} />
              </dd>
            </div>
            <div>
              <dt>Lasted</dt>
              <dd>{age((Date.parse(incident.resolved_at) - opened) / 1000)}</dd>
            </div>
          </>
        )}
        <div>
          <dt>Counts</dt>
          <dd>{countsText(incident.counts) ?? <span class="muted">none</span>}</dd>
        </div>
        <div>
          <dt>Acknowledged</dt>
          <dd>
            {incident.acknowledged_at === null ? (
              <span class="muted">{incident.state === 'open' ? 'not yet' : 'no'}</span>
            ) : (
              <>
                by {incident.acknowledged_by}, <Time at={incident.acknowledged_at} clock={ctx.clock} />
              </>
            )}
          </dd>
        </div>
        <div class="wide">
          <dt>Id</dt>
          <dd class="id">{incident.id}</dd>
        </div>
      </dl>
      {incident.state === 'open' && incident.acknowledged_at === null && (
        <Can needs="operator">
          <form method="post" action={`/ui/incidents/${encodeURIComponent(incident.id)}/ack`}>
            <button type="submit" aria-label={`Acknowledge ${name}`}>
              Acknowledge
            </button>
          </form>
        </Can>
      )}
      <Messages ctx={ctx} incident={incident} />
    </section>
  );
}

/** A message's states, the ones that need a look first. */
const MESSAGE_STATES = [
  ['dead', 'dead'],
  ['pending', 'pending'],
  ['in_flight', 'in flight'],
  ['done', 'sent'],
] as const;

/**
 * An incident's alert messages and where each is: unfolded while one is not sent yet, or went dead (said above the
 * table, too); folded to one line when every one was sent.
 */
function Messages({ ctx, incident }: { ctx: WebContext; incident: IncidentView }) {
  const { messages } = incident;
  if (messages.length === 0) return <p class="muted">No alert message was kept for it.</p>;
  const dead = messages.filter((m) => m.state === 'dead');
  const states = MESSAGE_STATES.map(
    ([state, label]) => [messages.filter((m) => m.state === state).length, label] as const,
  )
    .filter(([n]) => n > 0)
    .map(([n, label]) => `${n} ${label}`);
  return (
    <>
      {dead.length > 0 && (
        <p class="problem">
          Gone dead, never sent: {listOf(dead.map((m) => `the ${m.kind} message to ${m.channel}`))}.
        </p>
      )}
      <details class="messages" open={messages.some((m) => m.state !== 'done')}>
        <summary>
          {messages.length} alert {messages.length === 1 ? 'message' : 'messages'}: {states.join(', ')}
        </summary>
        <CardTable
          label={`Messages of incident ${incident.id}`}
          columns={['Channel', 'Message', 'State', { text: 'Attempts', num: true }, 'Last change', 'Last error']}
        >
          {messages.map((m) => (
            <tr>
              <td data-label="Channel">{m.channel}</td>
              <td data-label="Message">{m.kind}</td>
              <td data-label="State">
                <DeliveryState state={m.state} />
              </td>
              <td data-label="Attempts" class="num">
                {m.attempts}
              </td>
              <td data-label="Last change">
                <Time at={m.updated_at} clock={ctx.clock} />
              </td>
              <td data-label="Last error" class={m.state === 'dead' ? 'problem' : undefined}>
                {m.last_error ?? ''}
              </td>
            </tr>
          ))}
        </CardTable>
      </details>
    </>
  );
}

/** `a`, `a and b`, `a, b and c`. */
function listOf(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}
