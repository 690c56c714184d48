import pino, { type DestinationStream, type Logger } from 'pino';
import { type SecretList, secretMasker } from './secrets.js';

export interface LoggerOptions {
  level: string;
  /**
   * Configured secrets: any that reaches a line anyway (inside an error message, a URL) is masked. A set may grow
   * after the logger is made (keys reloaded while serving), and what is added is masked from then on.
   */
  secrets?: SecretList;
  destination?: DestinationStream;
}

/**
 * pino JSON logs; the Authorization header is never written, whatever object carries it (docs/reference.md#secrets).
 */
export function createLogger({ level, secrets = [], destination }: LoggerOptions): Logger {
  return pino(
    {
      level,
      base: undefined,
      redact: {
        paths: [
          'authorization',
          'headers.authorization',
          'req.headers.authorization',
          '*.headers.authorization',
          '*.authorization',
        ],
        censor: '[redacted]',
      },
      hooks:
        secrets instanceof Set || (secrets as readonly string[]).length > 0
          ? { streamWrite: secretMasker(secrets) }
          : {},
    },
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

/**
 * The logger of the one line per request. Its fields are chosen by the app (id, method, path, status, time, the
 * summary of the outcome) and never carry headers, so it skips the redaction of `*.authorization`, which costs
 * more than the rest of the line; configured secrets are still masked.
 */
export function requestLogger(log: Logger): Logger {
  return log.child({}, { redact: [] });
}
