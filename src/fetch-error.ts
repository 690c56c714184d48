/**
 * fetch reports every network failure as TypeError("fetch failed"); the useful part is in its cause, with the
 * system's code (ECONNREFUSED, UND_ERR_SOCKET) put in front when the message does not already say it.
 */
export function describeFetchError(err: unknown): string {
  const cause = err instanceof Error ? err.cause : undefined;
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    return typeof code === 'string' && !cause.message.includes(code) ? `${code}: ${cause.message}` : cause.message;
  }
  return err instanceof Error ? err.message : String(err);
}
