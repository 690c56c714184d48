import type { Context } from 'hono';
import type { ActorEnv } from '../operators/guard.js';
import { ADMIN_TOKEN_ACTOR } from '../operators/roles.js';

/**
 * Who made a request that changes something, as it is kept with the change (an incident's `acknowledged_by`, an
 * erasure's actor, an edit's `by`: docs/reference.md#operators): the user's address, or `admin-token`, as the
 * request's authentication found them (`c.set('actor', …)`: http/admin.ts for the admin API, the dashboard's session
 * for its pages). A request no authentication named (none should reach a route that changes anything) is the
 * admin token's, as every request was before callhook knew its users.
 */
export function requestActor(c: Context): string {
  // Any route's context: the variable is set by the authentication in front of it, whatever the route's own Env says.
  return (c as unknown as Context<ActorEnv>).get('actor')?.name ?? ADMIN_TOKEN_ACTOR;
}
