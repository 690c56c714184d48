/**
 * Where a sink's service is, as its messages say it: the host and port of its URL, and never the URL itself, whose user
 * info (or a `password` query value) is a secret (docs/reference.md#secrets). The port is the service's own default
 * when the URL gives none, so that two messages about one server name it alike.
 */
export function hostAndPort(
  url: string | URL,
  { defaultPort, defaultHost = 'localhost' }: { defaultPort: number; defaultHost?: string },
): string {
  if (typeof url === 'string' && !URL.canParse(url)) return 'an address that is not a URL';
  const { hostname, port } = typeof url === 'string' ? new URL(url) : url;
  return `${hostname || defaultHost}:${port || defaultPort}`;
}
