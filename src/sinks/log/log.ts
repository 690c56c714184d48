import { z } from 'zod';
import type { CallRecord } from '../../record.js';
import { defineSinkType } from '../sink.js';

/**
 * Writes each call as one pino line: the simplest proof that calls arrive, and a debugging aid. The process log is read
 * by more people than the calls are, and kept longer, so by default a line says which call arrived and how it went, not
 * who called (docs/reference.md#operating): no name, number, address or summary, and not the dedup key, which can hold
 * a number. `full: true` writes the whole record.
 */
export const logSink = defineSinkType({
  type: 'log',
  options: z.strictObject({
    level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace']).default('info'),
    full: z.boolean().default(false),
  }),
  open({ level, full }, { name, log }) {
    const sinkLog = log.child({ sink: name });
    return {
      async deliver(record, { attempt }) {
        sinkLog[level]({ [full ? 'record' : 'call']: full ? record : summary(record), attempt }, 'call delivered');
      },
    };
  },
});

/** What a line says of a call by default: which one, from where, and its outcome, without personal data. */
export function summary(record: CallRecord): Record<string, unknown> {
  return {
    id: record.id,
    hook: record.hook,
    source: record.source,
    revision: record.revision,
    call_outcome: record.data.call_outcome ?? null,
    problems: record.problems.map((p) => p.code),
  };
}

/** The registry loads a type by its folder's name and takes its default export (registry.ts). */
export default logSink;
