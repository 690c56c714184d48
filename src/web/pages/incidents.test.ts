import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { incidentOperations } from '../../admin/incidents.js';
import { newId } from '../../ids.js';
import { openSqliteStore } from '../../store/sqlite/store.js';
import type { Store } from '../../store/store.js';
import { openFirst } from './incidents.js';

/** The incidents page's order and paging, on a real store: open ones first, then resolved, each newest first. */
describe('openFirst', () => {
  let store: Store;
  const open: string[] = [];
  const resolved: string[] = [];

  beforeAll(async () => {
    store = openSqliteStore({ path: ':memory:' });
    const start = Date.now() - 3_600_000;
    // Interleaved in time, so that the order by state is the page's and not the store's.
    for (let i = 0; i < 7; i++) {
      const at = new Date(start + i * 60_000).toISOString();
      const key = `sink-${i}`;
      const { incident } = await store.openIncident({
        id: newId(Date.parse(at)),
        rule: i % 2 === 0 ? 'dead_delivery' : 'sink_backlog',
        key,
        at,
        counts: { dead: 1 },
        summary: key,
        channels: [],
      });
      if (i % 3 === 0) {
        await store.resolveIncident(incident.rule, key, new Date(Date.parse(at) + 1000).toISOString(), []);
        resolved.unshift(incident.id);
      } else open.unshift(incident.id);
    }
  });
  afterAll(() => store?.close());

  /** Every page's ids, following `next` from the first page. */
  async function walk(query: Omit<Parameters<typeof openFirst>[1], 'after'>) {
    const pages: string[][] = [];
    let after: string | undefined;
    do {
      const page = await openFirst(incidentOperations({ store }), { ...query, after });
      pages.push(page.incidents.map((i) => i.id));
      after = page.next ?? undefined;
    } while (after !== undefined && pages.length < 10);
    return pages;
  }

  it('lists the open ones first, then the resolved, across pages, each once', async () => {
    expect(open).toHaveLength(4);
    expect(resolved).toHaveLength(3);
    expect(await walk({ limit: 3 })).toEqual([open.slice(0, 3), [open[3], ...resolved.slice(0, 2)], [resolved[2]]]);
    // A page that ends with the last open incident: the next begins at the first resolved one.
    expect(await walk({ limit: 4 })).toEqual([open, resolved]);
    expect(await walk({ limit: 7 })).toEqual([[...open, ...resolved]]);
  });

  it('keeps to a state or a rule when asked', async () => {
    expect(await walk({ state: 'resolved', limit: 2 })).toEqual([resolved.slice(0, 2), [resolved[2]]]);
    expect(await walk({ state: 'open', limit: 4 })).toEqual([open]);
    const backlog = (await walk({ rule: 'sink_backlog', limit: 10 })).flat();
    expect(backlog).toHaveLength(3);
    expect((await Promise.all(backlog.map((id) => store.getIncident(id)))).map((i) => i?.rule)).toEqual([
      'sink_backlog',
      'sink_backlog',
      'sink_backlog',
    ]);
  });

  it('begins at the first page for an `after` it did not make', async () => {
    const first = await openFirst(incidentOperations({ store }), { limit: 2 });
    for (const after of ['', 'closed.x', 'open.<script>', `resolved.${'a'.repeat(65)}`])
      expect(await openFirst(incidentOperations({ store }), { limit: 2, after })).toEqual(first);
  });
});
