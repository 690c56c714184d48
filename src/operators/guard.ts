import type { MiddlewareHandler } from 'hono';
import { CallhookError } from '../errors.js';
import { type Actor, allows, type Role } from './roles.js';

/**
 * Roles on routes (docs/reference.md#operators). Every admin route and every dashboard page and form names the role
 * it needs with `allow(role)`, its first handler after authentication; `routeRoles` reads them back from an app's
 * routes, so a test can go over every route and refuse one that names none: a route without a role is a failing
 * test, not a default.
 */

/** The request's actor, set by whichever authentication let the request in. */
export type ActorEnv = { Variables: { actor: Actor } };

const GUARDS = new WeakMap<object, Role>();

/**
 * The route needs `role`: a request from an actor below it is refused with 403 and the Error object, before anything
 * else of the route runs. `onRefused` hears of it (the audit log keeps the attempt).
 */
export function allow<E extends ActorEnv>(
  role: Role,
  onRefused?: (actor: Actor, method: string, path: string) => void | Promise<void>,
): MiddlewareHandler<E> {
  const guard: MiddlewareHandler<E> = async function roleGuard(c, next) {
    const actor = c.get('actor');
    if (!actor || !allows(actor.role, role)) {
      if (actor) await onRefused?.(actor, c.req.method, c.req.path);
      throw new CallhookError('FORBIDDEN', `this needs the ${role} role${actor ? `; you are ${actor.role}` : ''}`);
    }
    await next();
  };
  GUARDS.set(guard, role);
  return guard;
}

/**
 * Where Hono keeps the handler it wrapped: an app with an error handler of its own, mounted with `route()`, has each
 * of its handlers wrapped in one that runs that error handler, the original kept under this key (hono-base.ts).
 */
const COMPOSED_HANDLER = '__COMPOSED_HANDLER';

/** The role a handler guards with, when it is a guard `allow` made (or wraps one, mounted). */
export function guardRole(handler: unknown): Role | undefined {
  for (let at = handler; typeof at === 'function'; at = (at as { [COMPOSED_HANDLER]?: unknown })[COMPOSED_HANDLER]) {
    const role = GUARDS.get(at);
    if (role) return role;
  }
  return undefined;
}

/**
 * Each route of an app (Hono's `routes`: one entry per handler, middleware included) with the role its guard names,
 * or undefined when none of its handlers is a guard. Middleware registered for every method (`use`) is left out.
 */
export function routeRoles(
  routes: readonly { method: string; path: string; handler: unknown }[],
): { method: string; path: string; role: Role | undefined }[] {
  const byRoute = new Map<string, { method: string; path: string; role: Role | undefined }>();
  for (const { method, path, handler } of routes) {
    if (method === 'ALL') continue;
    const key = `${method} ${path}`;
    const entry = byRoute.get(key) ?? { method, path, role: undefined };
    entry.role ??= guardRole(handler);
    byRoute.set(key, entry);
  }
  return [...byRoute.values()];
}
