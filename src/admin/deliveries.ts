import { CallhookError } from '../errors.js';
import type { AdminQueries, DeliveryInfo, ListDeliveriesQuery, RetryQuery } from '../store/admin-queries.js';

/**
 * The operations on deliveries (docs/reference.md#operating): list them by state, sink and call, and retry them, in
 * bulk or one. Shared by the admin API (`GET /admin/deliveries`, `POST /admin/deliveries/retry`, `POST
 * /admin/deliveries/<id>/retry`), the dashboard and `callhook deliveries list|retry`, so what a retry resets and which
 * delivery may be retried are written once. A retry puts deliveries back to pending, due now, with a fresh attempt
 * count; the attempts made so far stay in the history (admin-queries.ts retryDeliveries).
 */

export interface DeliveriesDeps {
  store: AdminQueries;
  /** Wakes the delivery worker after something became due; the CLI, which runs none, gives a no-op. */
  notify: () => void;
  /**
   * The running serve's sinks: a retry naming another is refused (a typo would otherwise retry nothing and say
   * so quietly). Without it (the CLI, on a store whose sinks its config may not know) any name is taken.
   */
  sinkNames?: readonly string[];
}

export type DeliveriesQuery = Omit<ListDeliveriesQuery, 'limit'> & { limit: number };

export interface DeliveriesPage {
  deliveries: DeliveryInfo[];
  /** The cursor (`after`) of the next page, null on the last. */
  next: number | null;
}

export interface Retried {
  retried: number;
}

export async function listDeliveries(
  { store }: Pick<DeliveriesDeps, 'store'>,
  query: DeliveriesQuery,
): Promise<DeliveriesPage> {
  const deliveries = await store.listDeliveries(query);
  return { deliveries, next: deliveries.length === query.limit ? deliveries.at(-1)!.id : null };
}

/** Retries what matches: dead deliveries unless `state` says pending (made due now), narrowed by sink, call or ids. */
export async function retryDeliveries(
  { store, notify, sinkNames }: DeliveriesDeps,
  { state = 'dead', ...query }: RetryQuery = {},
): Promise<Retried> {
  if (query.sink !== undefined && sinkNames !== undefined && !sinkNames.includes(query.sink)) {
    throw new CallhookError('BAD_REQUEST', `no sink is named ${query.sink} (sinks: ${sinkNames.join(', ')})`);
  }
  const retried = await store.retryDeliveries({ ...query, state });
  if (retried > 0) notify();
  return { retried };
}

/**
 * Retries one dead delivery. An id that is no delivery's (not a positive whole number) is a 404; a delivery that is
 * missing or not dead is a 409, since the store cannot tell them apart in the one write that retries it.
 */
export async function retryDelivery(deps: DeliveriesDeps, id: string | number): Promise<Retried> {
  const n = Number(id);
  if (!Number.isSafeInteger(n) || n < 1) throw new CallhookError('NOT_FOUND', `no delivery with id ${id}`);
  const { retried } = await retryDeliveries(deps, { ids: [n], state: 'dead' });
  if (retried === 0) throw new CallhookError('CONFLICT', `delivery ${n} does not exist or is not dead`);
  return { retried };
}

/**
 * How many deliveries a bulk retry of `state` (dead by default), narrowed to a sink or not, would take now: the
 * count a confirmation states. Read from the store's per-sink counts (the ones /metrics reads), never a scan.
 */
export async function countRetryable(
  { store }: Pick<DeliveriesDeps, 'store'>,
  { state = 'dead', sink }: Pick<RetryQuery, 'state' | 'sink'> = {},
): Promise<number> {
  const stats = await store.deliveryStats();
  return stats
    .filter((s) => s.state === state && (sink === undefined || s.sink === sink))
    .reduce((n, s) => n + s.count, 0);
}

/** The operations with their deps bound, for a caller that holds one set of deps (the admin API, the dashboard). */
export function deliveryOperations(deps: DeliveriesDeps) {
  return {
    listDeliveries: (query: DeliveriesQuery) => listDeliveries(deps, query),
    retryDeliveries: (query?: RetryQuery) => retryDeliveries(deps, query),
    retryDelivery: (id: string | number) => retryDelivery(deps, id),
    countRetryable: (query?: Pick<RetryQuery, 'state' | 'sink'>) => countRetryable(deps, query),
  };
}

export type DeliveryOperations = ReturnType<typeof deliveryOperations>;
