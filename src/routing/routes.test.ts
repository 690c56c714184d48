import { describe, expect, it } from 'vitest';
import type { CallRecord } from '../record.js';
import { compileRoutes, type SinkWhen } from './routes.js';

const record = (data: CallRecord['data'], source: CallRecord['source'] = 'webhook'): CallRecord => ({
  id: 'r1',
  hook: 'end-of-call',
  dedup_key: 'call_id:r1',
  received_at: '2026-11-21T10:00:00.000Z',
  source,
  revision: 1,
  data,
  extra: {},
  problems: [],
});
const wanted = (routes: ReturnType<typeof compileRoutes>, rec: CallRecord) =>
  routes.filter((route) => route.accepts(rec)).map((route) => route.name);

const sinks: SinkWhen[] = [
  { name: 'crm', when: { field: 'call_outcome', matches: '^order\\s+placed$' }, testTraffic: false },
  { name: 'audit', when: undefined, testTraffic: false },
  { name: 'callbacks', when: { not: { field: 'call_outcome', eq: 'order placed' } }, testTraffic: false },
];

describe('compileRoutes', () => {
  it("routes a record to the hook's sinks whose `when` takes it, in the hook's order", () => {
    const routes = compileRoutes(['callbacks', 'crm', 'audit'], sinks);
    expect(routes.map((route) => route.name)).toEqual(['callbacks', 'crm', 'audit']);
    expect(wanted(routes, record({ call_outcome: 'Order placed' }))).toEqual(['crm', 'audit']);
    expect(wanted(routes, record({ call_outcome: 'call back' }))).toEqual(['callbacks', 'audit']);
  });

  it('gives a sink without a `when`, or one the list does not name, every record', () => {
    const routes = compileRoutes(['audit', 'elsewhere'], sinks);
    expect(wanted(routes, record({}))).toEqual(['audit', 'elsewhere']);
    expect(compileRoutes([], sinks)).toEqual([]);
  });

  it('sends test traffic (replay, simulate) only to the sinks that take it, each still by its `when`', () => {
    const routes = compileRoutes(
      ['crm', 'audit', 'file', 'sample'],
      [
        ...sinks,
        { name: 'file', when: undefined, testTraffic: true },
        { name: 'sample', when: { field: 'call_outcome', eq: 'order placed' }, testTraffic: true },
      ],
    );
    expect(routes.map((route) => [route.name, route.testTraffic])).toEqual([
      ['crm', false],
      ['audit', false],
      ['file', true],
      ['sample', true],
    ]);
    for (const source of ['replay', 'simulate'] as const) {
      expect(wanted(routes, record({ call_outcome: 'Order placed' }, source))).toEqual(['file', 'sample']);
      expect(wanted(routes, record({ call_outcome: 'call back' }, source))).toEqual(['file']);
    }
    for (const source of ['webhook', 'reconcile', 'recovered'] as const) {
      expect(wanted(routes, record({ call_outcome: 'Order placed' }, source))).toEqual([
        'crm',
        'audit',
        'file',
        'sample',
      ]);
    }
  });

  it("routes alike from a copy of the data, as the writer's thread receives it", () => {
    const here = compileRoutes(['crm', 'callbacks'], sinks);
    const there = compileRoutes(['crm', 'callbacks'], structuredClone(sinks));
    for (const outcome of ['order placed', 'call back', undefined]) {
      for (const source of ['webhook', 'replay'] as const) {
        const rec = record(outcome === undefined ? {} : { call_outcome: outcome }, source);
        expect(wanted(there, rec)).toEqual(wanted(here, rec));
      }
    }
  });
});
