import { CallingServiceError } from '../client/index.js';

/**
 * One line an operator can act on. The service documents no status codes (spec section 7), so a refused key is
 * recognised by 401 or 403 only; the API key itself is never part of the line.
 */
export function describeServiceError(err: unknown, apiUrl: string): string {
  if (err instanceof CallingServiceError) {
    if (err.status === 401 || err.status === 403) return `the calling service at ${apiUrl} refused the API key (HTTP ${err.status}: ${err.message})`;
    if (err.status === 0) return `cannot reach the calling service at ${apiUrl}: ${err.message}`;
    const status = `HTTP ${err.status}`;
    return `the calling service at ${apiUrl} answered ${err.message === status ? status : `${status}: ${err.message}`}`;
  }
  return err instanceof Error ? err.message : String(err);
}
