import { z } from 'zod';
import { defineSinkType } from './sink.js';

/** Writes each record as one pino line: the simplest proof that calls arrive, and a debugging aid. */
export const logSink = defineSinkType({
  options: z.strictObject({
    level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace']).default('info'),
  }),
  create({ level }, { name, log }) {
    const sinkLog = log.child({ sink: name });
    return {
      async deliver(record, { attempt }) {
        sinkLog[level]({ record, attempt }, 'call delivered');
      },
    };
  },
});
