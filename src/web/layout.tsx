import type { Context } from 'hono';
import type { Child } from 'hono/jsx';
import { jsxRenderer } from 'hono/jsx-renderer';
import { allows, type Role } from '../operators/roles.js';
import type { WebEnv } from './context.js';

/** What each page gives the layout: its title (the `<title>` and, by the page itself, its one `<h1>`). */
export interface PageProps {
  title: string;
  /** Which item of the menu this page is under; none on the sign-in page, which has no menu. */
  section?: Section;
}

declare module 'hono' {
  // Merging into Hono's own ContextRenderer takes an interface (biome.jsonc lets this file keep it).
  interface ContextRenderer {
    (content: string | Promise<string>, props: PageProps): Response | Promise<Response>;
  }
}

/** The menu: each page with the role that may open it (the users and the audit log are an admin's). */
export const SECTIONS = [
  ['overview', '/ui', 'Overview', 'viewer'],
  ['calls', '/ui/calls', 'Calls', 'viewer'],
  ['review', '/ui/review', 'Review', 'viewer'],
  ['deliveries', '/ui/deliveries', 'Deliveries', 'viewer'],
  ['sinks', '/ui/sinks', 'Sinks', 'viewer'],
  ['refused', '/ui/refused', 'Refused', 'viewer'],
  ['incidents', '/ui/incidents', 'Incidents', 'viewer'],
  ['users', '/ui/users', 'Users', 'admin'],
  ['audit', '/ui/audit', 'Audit', 'admin'],
] as const satisfies readonly (readonly [string, string, string, Role])[];
export type Section = (typeof SECTIONS)[number][0];

/**
 * The page around every page: the menu (the pages the signed-in role may open), who is signed in with their role and
 * a sign-out button, in which zone times are shown, and under the menu the `banner` of this request (the open
 * incidents: incident-banner.tsx), which is nothing on a page without the menu.
 */
export function layout(zone: string, { banner }: { banner?: (c: Context<WebEnv>) => Child } = {}) {
  return jsxRenderer<WebEnv>(({ children, title, section }: PageProps & { children?: Child }, c) => {
    const actor = c.get('actor');
    // A page without a session (an error before the sign-in check) has no menu: there is nobody to show it to.
    const menu = section !== undefined && actor !== undefined;
    return (
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <title>{`${title} · callhook`}</title>
          <link rel="stylesheet" href="/ui/assets/style.css" />
        </head>
        <body>
          {menu && (
            <header class="top">
              <a class="brand" href="/ui">
                callhook
              </a>
              <nav aria-label="Main">
                <ul>
                  {SECTIONS.filter(([, , , role]) => allows(actor.role, role)).map(([key, href, label]) => (
                    <li>
                      <a href={href} aria-current={key === section ? 'page' : undefined}>
                        {label}
                      </a>
                    </li>
                  ))}
                </ul>
              </nav>
              <form class="who" method="post" action="/ui/logout">
                <span>
                  {actor.name} <span class="muted">({actor.role})</span>
                </span>
                <button type="submit">Sign out</button>
              </form>
            </header>
          )}
          {menu && banner?.(c)}
          <main>{children}</main>
          {menu && <footer>Times are shown in {zone}.</footer>}
        </body>
      </html>
    );
  });
}
