import { type Config, loadConfig } from '../../src/config.js';
import { type WriterThread, writerThread } from '../../src/intake/thread.js';
import type { SinkWhen } from '../../src/routing/routes.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { Store } from '../../src/store/store.js';

/** A SQLite store written by its writer thread, as `serve` opens it (src/main.ts). */
export interface Threaded {
  store: Store;
  thread: WriterThread;
  /** The thread first, as `serve` stops: it finishes the writes under way, then the store closes. */
  close(): Promise<void>;
}

export function openThreaded(
  path: string,
  config: Pick<Config, 'hooks' | 'phoneRegion' | 'dateOrder'> = loadConfig({
    CALLHOOK_API_KEYS: 'writer-thread-key-0123456789',
  }),
  sinks: readonly SinkWhen[] = [],
): Threaded {
  const thread = writerThread(path, config, sinks);
  const store = openSqliteStore({ path, remote: thread.write });
  return {
    store,
    thread,
    close: async () => {
      await thread.close();
      await store.close();
    },
  };
}
