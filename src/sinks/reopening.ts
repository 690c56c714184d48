import { lazyConnection } from './shared/lazy-connection.js';
import type { Sink } from './sink.js';

/**
 * A sink that could not be opened at start-up (its server down, its credentials refused): start-up goes on
 * (docs/reference.md#queues-and-databases), and each attempt opens it again until it opens, failing meanwhile with the
 * error the open threw, which the worker classifies and records like any attempt's (retried on the schedule; dead at
 * once when the sink threw a PermanentError). Attempts that start together share one open; once open, the sink is used
 * as if it had opened at start-up, and it is never dropped again: a sink re-opens its own connections (section 9). The
 * opened sink is to this what a connection is to a sink, so the lazy connection of the sinks serves here too.
 */
export function reopening(open: () => Promise<Sink>): Sink {
  const sink = lazyConnection({ open, close: (opened) => opened.close?.() });
  return {
    async deliver(record, context) {
      return (await sink.get()).deliver(record, context);
    },
    close: () => sink.close(),
  };
}
