import type { Context } from 'hono';

/**
 * Who made a request that changes something, as it is kept with the change (an incident's `acknowledged_by`,
 * docs/reference.md#alerts). The admin API and the dashboard open to one secret today, the admin token (a dashboard
 * session is made with it), and it acts as an operator named `admin-token`. Personal users will be told apart here,
 * from what their authentication left on the request: every route that records a person asks this function.
 */
export const ADMIN_TOKEN_ACTOR = 'admin-token';

export function requestActor(_c: Context): string {
  return ADMIN_TOKEN_ACTOR;
}
