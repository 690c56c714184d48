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
    destination ?? turnDestination(1),
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

/** A destination that gathers the lines of one turn of the event loop and writes them together. */
export interface TurnDestination extends DestinationStream {
  /** Writes the lines still waiting (pino's `logger.flush()` calls it). */
  flush(done?: (err?: Error) => void): void;
}

/** The destinations with lines waiting, written by the exit handler if the process ends first. */
const waiting = new Set<() => void>();
let exitHandler = false;

/**
 * Standard output (or a file), written once per turn of the event loop: the lines of a turn (a request's line, a
 * delivery's) are joined and written by one synchronous write after the turn's callbacks, as Node itself writes its
 * standard output on Linux. pino's asynchronous destination, written as each line came, cost about 7 µs of CPU a line
 * under load where this costs about 2 (docs/performance.md). sonic-boom's synchronous mode waits and retries on a
 * full pipe (EAGAIN) rather than dropping a line. Lines still waiting when the process exits are written then.
 */
export function turnDestination(dest: number | string): TurnDestination {
  const out = pino.destination({ dest, sync: true });
  let lines: string[] = [];
  const flush = () => {
    waiting.delete(flush);
    if (lines.length === 0) return;
    const text = lines.join('');
    lines = [];
    out.write(text);
  };
  if (!exitHandler) {
    exitHandler = true;
    process.on('exit', () => {
      for (const pending of waiting) pending();
    });
  }
  return {
    write(line: string) {
      lines.push(line);
      if (lines.length > 1) return;
      waiting.add(flush);
      setImmediate(flush);
    },
    flush(done) {
      try {
        flush();
        done?.();
      } catch (err) {
        done?.(err as Error);
      }
    },
  };
}
