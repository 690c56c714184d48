import type { Child } from 'hono/jsx';
import { useRequestContext } from 'hono/jsx-renderer';
import { allows, type Role } from '../operators/roles.js';
import type { WebEnv } from './context.js';

/**
 * What a page shows only to a role that may use it (docs/dashboard.md#roles): a viewer sees no edit or release button,
 * and only an admin the users and the audit log. The route refuses the rest anyway (operators/guard.ts); this keeps
 * the page from offering what would be refused.
 */
export function Can({ needs, children }: { needs: Role; children?: Child }) {
  return mayUse(needs) ? <>{children}</> : null;
}

/** Whether the request's signed-in person has `role` or more; false on a page nobody is signed in to. */
export function mayUse(role: Role): boolean {
  const actor = useRequestContext<WebEnv>().get('actor');
  return actor !== undefined && allows(actor.role, role);
}
