import type { AdminQueries, ListCallsQuery, StoredCall } from './admin-queries.js';

/** Every call the query finds, oldest first, a page of `size` at a time: the `after` cursor walked for the caller. */
export async function* callPages(
  store: Pick<AdminQueries, 'listCalls'>,
  query: Omit<ListCallsQuery, 'after' | 'limit'>,
  size: number,
): AsyncGenerator<StoredCall[]> {
  for (let after: string | undefined; ; ) {
    const page = await store.listCalls({ ...query, after, limit: size });
    if (page.length > 0) yield page;
    if (page.length < size) return;
    after = page.at(-1)!.record.id;
  }
}
