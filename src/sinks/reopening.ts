import type { Sink } from './sink.js';

/**
 * A sink that could not be opened at start-up (its server down, its credentials refused): start-up goes on
 * (contract section 9), and each attempt opens it again until it opens, failing meanwhile with the error the open
 * threw, which the worker classifies and records like any attempt's (retried on the schedule; dead at once when
 * the sink threw a PermanentError). Attempts that start together share one open; once open, the sink is used as
 * if it had opened at start-up.
 */
export function reopening(open: () => Promise<Sink>): Sink {
  let opened: Sink | undefined;
  let opening: Promise<Sink> | undefined;
  const sink = () => (opening ??= open().then(
    (s) => (opened = s),
    (err: unknown) => {
      opening = undefined; // the next attempt tries again
      throw err;
    },
  ));
  return {
    async deliver(record, context) {
      return (opened ?? (await sink())).deliver(record, context);
    },
    async close() {
      await opening?.catch(() => undefined);
      await opened?.close?.();
    },
  };
}
