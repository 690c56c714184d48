import type { SinkContext } from '../sink.js';

/**
 * Masks each access token a sink fetches with its credentials (Zoho's refresh grant, Google's JWT grant) wherever
 * callhook writes text (docs/reference.md#secrets), keeping the newest two: the one a newer token replaced may still be
 * in flight in an attempt, and a reply that quotes it is masked too. Older ones have expired and are forgotten, so a
 * serve that runs for months masks two tokens, not thousands.
 */
export function maskFetchedTokens(secret: SinkContext['secret']): (token: string) => void {
  const forgets: (() => void)[] = [];
  return (token) => {
    if (!secret) return;
    forgets.push(secret(token));
    while (forgets.length > 2) forgets.shift()!();
  };
}
