import { CallingServiceError } from '../client/index.js';

/**
 * One line an operator can act on. The service documents no status codes (spec section 7), so a refused key is
 * recognised by 401 or 403 only; the API key itself is never part of the line.
 */
export function describeServiceError(err: unknown, apiUrl: string): string {
  if (err instanceof CallingServiceError) {
    if (err.status === 401 || err.status === 403)
      return `the calling service at ${apiUrl} refused the API key (${err.statusLine})`;
    if (err.status === 0) return `cannot reach the calling service at ${apiUrl}: ${err.message}`;
    return `the calling service at ${apiUrl} answered ${err.statusLine}`;
  }
  return err instanceof Error ? err.message : String(err);
}
