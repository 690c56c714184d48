import type { Context, MiddlewareHandler } from 'hono';
import { requestHeader } from '../http/node-headers.js';

/**
 * Where the browser believes it is: the scheme and host of the page it shows. Behind a proxy
 * (docs/reference.md#exposure, `trust_proxy`) that is what the proxy says in `X-Forwarded-Proto` and
 * `X-Forwarded-Host`, each read from its last value, the one the proxy in front of callhook wrote (as X-Forwarded-For's
 * last hop is); otherwise the request's own. `scheme` is undefined when nothing says it: without a proxy header, the
 * scheme of the hop that reached callhook is not the browser's when a proxy ends TLS in front of it.
 */
export function publicOrigin(
  c: Context,
  trustProxy: boolean,
): { scheme: string | undefined; host: string | undefined } {
  const url = new URL(c.req.url);
  const forwarded = (name: string) =>
    trustProxy ? requestHeader(c, name)?.split(',').at(-1)?.trim().toLowerCase() || undefined : undefined;
  const scheme = forwarded('x-forwarded-proto') ?? (url.protocol === 'https:' ? 'https' : undefined);
  const host = forwarded('x-forwarded-host') ?? requestHeader(c, 'host')?.toLowerCase() ?? url.host;
  return { scheme, host };
}

/** Whether the browser came over HTTPS, for the session cookie's `Secure` flag (docs/reference.md#dashboard). */
export function overHttps(c: Context, trustProxy: boolean): boolean {
  return publicOrigin(c, trustProxy).scheme === 'https';
}

/**
 * docs/reference.md#dashboard: a POST whose `Origin` is another site, or `null`, is refused with 403.
 *
 * hono/csrf lets a request through on `Sec-Fetch-Site: same-origin` whatever its Origin says, looks only at form
 * bodies, and compares with the request's own URL, which behind a proxy is not the page's. This checks the Origin
 * of every POST against the page's host (and scheme, where known). A POST with no Origin at all is a client that
 * is not a browser (browsers send it on every POST), unless it says it is a cross-site fetch.
 */
export function sameOrigin({
  trustProxy,
  refuse,
}: {
  trustProxy: boolean;
  /** The 403 answer: a page that shows both origins and what to check behind a proxy (pages/other-site.tsx). */
  refuse: (c: Context, refusal: Refusal) => Response | Promise<Response>;
}): MiddlewareHandler {
  return async function originCheck(c, next) {
    if (c.req.method !== 'POST') return next();
    const origin = requestHeader(c, 'origin');
    const page = publicOrigin(c, trustProxy);
    if (origin === undefined) {
      if (requestHeader(c, 'sec-fetch-site') === 'cross-site') return refuse(c, { origin, page });
      return next();
    }
    let given: URL;
    try {
      given = new URL(origin);
    } catch {
      // `null` (a sandboxed frame, a redirect across sites, a file) and anything unreadable
      return refuse(c, { origin, page });
    }
    const sameHost = page.host !== undefined && given.host === page.host;
    const sameScheme = page.scheme === undefined || given.protocol === `${page.scheme}:`;
    return sameHost && sameScheme ? next() : refuse(c, { origin, page });
  };
}

/**
 * A POST the origin check refused: the `Origin` the browser sent (none from a cross-site fetch that sent none), and
 * where callhook believes the page is. Behind a proxy that does not pass `Host`, the two differ in the host alone,
 * and showing both is what tells the operator so.
 */
export interface Refusal {
  origin: string | undefined;
  page: { scheme: string | undefined; host: string | undefined };
}
