import { type CallRecord, isTestTraffic } from '../record.js';
import { compileWhen, type Filter } from './filter.js';

/**
 * Which of a hook's sinks a record goes to. Each sink's `when` and test-traffic rule are parsed and checked with the
 * config, as data (sinks/registry.ts), and compiled here once, with the hooks (intake/pipeline.ts compileHooks): on the
 * event loop, and at its start on the writer's thread, which cannot be handed functions and so is handed the same data
 * and compiles it with this same function (intake/writer-thread.ts). Everything that picks a call's sinks asks a
 * route: intake, the release of a held call, a redelivery to every sink, a period's redelivery to one.
 */

/** A configured sink's routing as the config says it: plain data, which crosses to a thread. */
export interface SinkWhen {
  name: string;
  when: Filter | undefined;
  /**
   * Whether it takes test traffic, `source` `replay` or `simulate` (docs/reference.md#test-traffic): the sink's
   * `test_traffic`, by default true for `log` and `jsonl` only (sinks/registry.ts).
   */
  testTraffic: boolean;
}

/** One of a hook's sinks, with the test of the records it wants. */
export interface Route {
  name: string;
  /** Its `when`, and for test traffic its test-traffic rule too. */
  accepts: (record: CallRecord) => boolean;
  testTraffic: boolean;
}

/**
 * The routes of a hook's sinks, in the hook's order. A sink without a `when` takes every record, but test traffic only
 * when it takes test traffic; one not in `sinks` (a config always lists them all) takes every record.
 */
export function compileRoutes(hookSinks: readonly string[], sinks: readonly SinkWhen[]): Route[] {
  const byName = new Map(sinks.map((sink) => [sink.name, sink]));
  return hookSinks.map((name) => {
    const sink = byName.get(name);
    const when = compileWhen(sink?.when);
    const testTraffic = sink?.testTraffic ?? true;
    return {
      name,
      accepts: testTraffic ? when : (record) => !isTestTraffic(record.source) && when(record),
      testTraffic,
    };
  });
}
