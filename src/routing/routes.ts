import type { CallRecord } from '../record.js';
import { compileWhen, type Filter } from './filter.js';

/**
 * Which of a hook's sinks a record goes to. Each sink's `when` is parsed and checked with the config, as data
 * (sinks/registry.ts), and compiled here once, with the hooks (intake/pipeline.ts compileHooks): on the event loop,
 * and at its start on the writer's thread, which cannot be handed functions and so is handed the same data and
 * compiles it with this same function (intake/writer-thread.ts).
 */

/** A configured sink's `when` as the config says it: plain data, which crosses to a thread. */
export interface SinkWhen {
  name: string;
  when: Filter | undefined;
}

/** One of a hook's sinks, with the test of the records it wants. */
export interface Route {
  name: string;
  accepts: (record: CallRecord) => boolean;
}

/**
 * The routes of a hook's sinks, in the hook's order; a sink without a `when`, or not in `sinks`, takes every record.
 */
export function compileRoutes(hookSinks: readonly string[], sinks: readonly SinkWhen[]): Route[] {
  const whens = new Map(sinks.map((sink) => [sink.name, sink.when]));
  return hookSinks.map((name) => ({ name, accepts: compileWhen(whens.get(name)) }));
}
