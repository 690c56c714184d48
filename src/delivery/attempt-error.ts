import { truncate } from '../sinks/shared/record-fields.js';

/**
 * An attempt's error as it is stored and shown: long enough to say what the service answered (an upstream's error
 * page is read up to 4 KiB, sinks/shared/http-response.ts), short enough for a list of attempts.
 */
export const ERROR_CHARS = 500;

/**
 * The secrets are taken out first and the text cut after (docs/reference.md#secrets): a secret across the cut would
 * otherwise keep its first part, which no masker could recognise once it stood alone.
 */
export function attemptError(text: string, mask: (text: string) => string = (t) => t): string {
  return truncate(mask(text), ERROR_CHARS);
}
