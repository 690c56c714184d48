import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../src/ids.js';
import type { IncidentRecord } from '../src/store/incidents.js';
import type { Store } from '../src/store/store.js';
import { commitInput, sleep, unique } from './helpers/store-inputs.js';

/**
 * What every Store keeps of the alerts (docs/reference.md#alerts), run against each implementation: one open incident
 * a rule and key whichever instance opens it (two instances stand for two replicas, or a serve and its restart), its
 * counts, acknowledgement and resolution, and its messages' outbox with leases, retries and dead letters.
 */
export function storeIncidentsContract(name: string, open: () => Promise<Store>): void {
  describe(`${name} store incidents contract`, () => {
    let a: Store;
    let b: Store;
    beforeAll(async () => {
      a = await open();
      b = await open();
    });
    afterAll(async () => {
      await a?.close();
      await b?.close();
    });

    const opening = (rule: string, key: string | null, channels = ['ops']) => ({
      id: newId(),
      rule,
      key,
      at: new Date().toISOString(),
      counts: { dead: 1 },
      summary: `${rule} ${key ?? ''}`,
      channels,
    });
    /** Leases every due message of these incidents, from whichever instance. */
    const claimOf = async (store: Store, ids: string[]) =>
      (await store.claimAlertMessages(100, 60_000)).filter((m) => ids.includes(m.incident.id));

    it('opens one incident a rule and key, counting every later occurrence in it, with one opening message a channel', async () => {
      const sink = unique('sink');
      const first = await a.openIncident(opening('dead_delivery', sink, ['ops', 'pager']));
      expect(first.opened).toBe(true);
      const again = await b.openIncident(opening('dead_delivery', sink, ['ops', 'pager']));
      expect(again).toMatchObject({ opened: false, incident: { id: first.incident.id, counts: { dead: 2 } } });
      expect(await b.countIncident('dead_delivery', sink, { dead: 3, refused: 1 }, new Date().toISOString())).toBe(
        true,
      );
      const kept = await a.getIncident(first.incident.id);
      expect(kept).toMatchObject({
        rule: 'dead_delivery',
        key: sink,
        counts: { dead: 5, refused: 1 },
        resolvedAt: null,
      });

      const messages = await a.listAlertMessages([first.incident.id]);
      expect(messages.map((m) => [m.channel, m.kind, m.state])).toEqual([
        ['ops', 'opened', 'pending'],
        ['pager', 'opened', 'pending'],
      ]);
      // The same rule about another key, and a rule with no key, are incidents of their own.
      expect((await a.openIncident(opening('dead_delivery', unique('sink')))).opened).toBe(true);
      const outage = await a.openIncident(opening(unique('rule'), null));
      expect(outage.opened).toBe(true);
      expect((await b.openIncident(opening(outage.incident.rule, null))).opened).toBe(false);
    });

    it('opens one incident between instances racing to open it', async () => {
      const key = unique('hook');
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).openIncident(opening('auth_failures', key))),
      );
      expect(results.filter((r) => r.opened)).toHaveLength(1);
      expect(new Set(results.map((r) => r.incident.id)).size).toBe(1);
      const [kept] = await a
        .listIncidents({ state: 'open', rule: 'auth_failures' })
        .then((list) => list.filter((i) => i.key === key));
      expect(kept?.counts).toEqual({ dead: 8 });
      expect(await a.listAlertMessages([kept!.id])).toHaveLength(1);
    });

    it('resolves the open incident once, with a resolving message a channel; the next occurrence opens a new one', async () => {
      const hook = unique('hook');
      const { incident } = await a.openIncident(opening('no_calls', hook));
      const at = new Date().toISOString();
      const [one, two] = await Promise.all([
        a.resolveIncident('no_calls', hook, at, ['ops']),
        b.resolveIncident('no_calls', hook, at, ['ops']),
      ]);
      expect([one, two].filter((r) => r !== undefined)).toHaveLength(1);
      expect((one ?? two)!).toMatchObject({ id: incident.id, resolvedAt: at });
      expect((await a.listAlertMessages([incident.id])).map((m) => m.kind)).toEqual(['opened', 'resolved']);
      expect(await a.countIncident('no_calls', hook, { calls: 1 }, at)).toBe(false);

      const next = await b.openIncident(opening('no_calls', hook));
      expect(next.opened).toBe(true);
      expect(next.incident.id).not.toBe(incident.id);
      const list = (await a.listIncidents({ rule: 'no_calls' })).filter((i) => i.key === hook);
      expect(list.map((i) => i.id)).toEqual([next.incident.id, incident.id]); // newest first
      expect((await a.listIncidents({ state: 'resolved', rule: 'no_calls' })).map((i) => i.id)).toContain(incident.id);
      expect((await a.listIncidents({ state: 'open', rule: 'no_calls' })).map((i) => i.id)).not.toContain(incident.id);
      // The open ones newest first too, and after a cursor.
      const later = await a.openIncident(opening('no_calls', unique('hook')));
      const open = (await a.listIncidents({ state: 'open', rule: 'no_calls' })).map((i) => i.id);
      expect(open.filter((id) => [next.incident.id, later.incident.id].includes(id))).toEqual([
        later.incident.id,
        next.incident.id,
      ]);
      expect(open).toEqual([...open].sort().reverse());
      const after = await a.listIncidents({ state: 'open', rule: 'no_calls', after: later.incident.id });
      expect(after.map((i) => i.id)).toContain(next.incident.id);
      expect(after.map((i) => i.id)).not.toContain(later.incident.id);
    });

    it('keeps who acknowledged an open incident, once; a resolved one is not acknowledged', async () => {
      const { incident } = await a.openIncident(opening('sink_backlog', unique('sink')));
      const acked = await b.acknowledgeIncident(incident.id, 'ops@example.com', '2026-01-02T03:04:05.000Z');
      expect(acked).toMatchObject({ acknowledgedBy: 'ops@example.com', acknowledgedAt: '2026-01-02T03:04:05.000Z' });
      const twice = await a.acknowledgeIncident(incident.id, 'someone-else', new Date().toISOString());
      expect(twice?.acknowledgedBy).toBe('ops@example.com');
      expect(await a.acknowledgeIncident(newId(), 'x', new Date().toISOString())).toBeUndefined();
      // An id as a client may send it, a NUL byte in it, is one no incident has, on either store.
      expect(await a.getIncident('x\u0000y')).toBeUndefined();
      expect(await a.acknowledgeIncident('x\u0000y', 'x', new Date().toISOString())).toBeUndefined();
      expect(Array.isArray(await a.listIncidents({ after: 'x\u0000y', limit: 1 }))).toBe(true);

      const other = await a.openIncident(opening('sink_backlog', unique('sink')));
      await a.resolveIncident('sink_backlog', other.incident.key, new Date().toISOString(), []);
      expect(
        (await a.acknowledgeIncident(other.incident.id, 'late', new Date().toISOString()))?.acknowledgedBy,
      ).toBeNull();
    });

    it('leases each due message to one instance, retries it when due, and keeps a dead one with its error', async () => {
      const { incident } = await a.openIncident(opening('held_waiting', unique('hook'), ['ops']));
      const leasedA = await claimOf(a, [incident.id]);
      const leasedB = await claimOf(b, [incident.id]);
      expect(leasedA.length + leasedB.length).toBe(1);
      const [message] = [...leasedA, ...leasedB];
      expect(message).toMatchObject({ channel: 'ops', kind: 'opened', attempt: 1, incident: { id: incident.id } });

      expect(
        await a.finishAlertMessage(
          message!.id,
          message!.attempt,
          { outcome: 'retry', error: 'HTTP 503' },
          Date.now() + 50,
        ),
      ).toBe(true);
      expect(await claimOf(a, [incident.id])).toEqual([]);
      expect(await a.nextAlertDueIn()).toBeLessThanOrEqual(50);
      await sleep(60);
      const [again] = await claimOf(b, [incident.id]);
      expect(again?.attempt).toBe(2);
      // The first attempt's late answer changes nothing.
      expect(await a.finishAlertMessage(message!.id, 1, { outcome: 'ok' })).toBe(false);
      expect(await b.finishAlertMessage(again!.id, 2, { outcome: 'dead', error: 'HTTP 404 no such channel' })).toBe(
        true,
      );
      expect(await a.listAlertMessages([incident.id])).toEqual([
        expect.objectContaining({ channel: 'ops', state: 'dead', attempts: 2, lastError: 'HTTP 404 no such channel' }),
      ]);
    });

    it('gives an expired lease to the next claim, and delivers a message once done', async () => {
      const { incident } = await a.openIncident(opening('held_waiting', unique('hook'), ['ops']));
      const [first] = (await a.claimAlertMessages(100, 30)).filter((m) => m.incident.id === incident.id);
      expect(first).toBeDefined();
      await sleep(50);
      const [taken] = await claimOf(b, [incident.id]);
      expect(taken?.attempt).toBe(2);
      expect(await b.finishAlertMessage(taken!.id, 2, { outcome: 'ok' })).toBe(true);
      expect((await a.listAlertMessages([incident.id]))[0]).toMatchObject({ state: 'done', attempts: 2 });
    });

    it('records an incident made elsewhere with the messages already sent and those still to send', async () => {
      const incident: IncidentRecord = {
        id: newId(),
        rule: 'store_outage',
        key: null,
        openedAt: '2026-03-01T10:00:00.000Z',
        lastEventAt: '2026-03-01T10:05:00.000Z',
        acknowledgedAt: null,
        acknowledgedBy: null,
        resolvedAt: '2026-03-01T10:06:00.000Z',
        counts: { refused: 41 },
        summary: 'The store could not commit',
      };
      await a.recordIncident(incident, { kind: 'resolved', channels: ['ops', 'pager'] }, [
        { channel: 'ops', kind: 'opened', state: 'done', error: null },
        { channel: 'pager', kind: 'opened', state: 'dead', error: 'HTTP 400' },
      ]);
      expect(await b.getIncident(incident.id)).toEqual(incident);
      expect((await b.listAlertMessages([incident.id])).map((m) => [m.channel, m.kind, m.state, m.lastError])).toEqual([
        ['ops', 'opened', 'done', null],
        ['pager', 'opened', 'dead', 'HTTP 400'],
        ['ops', 'resolved', 'pending', null],
        ['pager', 'resolved', 'pending', null],
      ]);
      // A resolved incident holds no key: a new store_outage opens beside it.
      expect((await a.openIncident(opening('store_outage', null))).opened).toBe(true);
      await a.resolveIncident('store_outage', null, new Date().toISOString(), []);
    });

    it('finds held calls by hook, a hook’s newest call since a time, and whether a hook has calls', async () => {
      const hook = unique('hook');
      expect(await a.hasCalls(hook)).toBe(false);
      const before = new Date(Date.now() - 1000).toISOString();
      expect(await a.lastCallSince(hook, before)).toBeUndefined();
      await a.commitCall(commitInput(hook, 'call_id:1', []));
      await a.commitCall({ ...commitInput(hook, 'call_id:2', []), status: 'held' });
      await a.commitCall({ ...commitInput(hook, 'call_id:3', []), status: 'held' });
      expect(await b.hasCalls(hook)).toBe(true);
      const last = await b.lastCallSince(hook, before);
      expect(Date.parse(last!)).toBeGreaterThan(Date.parse(before));
      expect(await b.lastCallSince(hook, new Date(Date.now() + 60_000).toISOString())).toBeUndefined();
      const held = (await b.heldCalls()).find((h) => h.hook === hook);
      expect(held).toMatchObject({ hook, count: 2 });
      expect(Date.parse(held!.oldestAt)).toBeGreaterThan(Date.parse(before));
    });
  });
}
