import type { Context } from 'hono';
import type { Child } from 'hono/jsx';
import { jsxRenderer } from 'hono/jsx-renderer';

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

export const SECTIONS = [
  ['overview', '/ui', 'Overview'],
  ['calls', '/ui/calls', 'Calls'],
  ['review', '/ui/review', 'Review'],
  ['deliveries', '/ui/deliveries', 'Deliveries'],
  ['sinks', '/ui/sinks', 'Sinks'],
  ['refused', '/ui/refused', 'Refused'],
  ['incidents', '/ui/incidents', 'Incidents'],
] as const;
export type Section = (typeof SECTIONS)[number][0];

/**
 * The page around every page: the menu, a sign-out button, in which zone times are shown, and under the menu the
 * `banner` of this request (the open incidents: incident-banner.tsx), which is nothing on a page without the menu.
 */
export function layout(zone: string, { banner }: { banner?: (c: Context) => Child } = {}) {
  return jsxRenderer(({ children, title, section }: PageProps & { children?: Child }, c) => (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${title} · callhook`}</title>
        <link rel="stylesheet" href="/ui/assets/style.css" />
      </head>
      <body>
        {section !== undefined && (
          <header class="top">
            <a class="brand" href="/ui">
              callhook
            </a>
            <nav aria-label="Main">
              <ul>
                {SECTIONS.map(([key, href, label]) => (
                  <li>
                    <a href={href} aria-current={key === section ? 'page' : undefined}>
                      {label}
                    </a>
                  </li>
                ))}
              </ul>
            </nav>
            <form method="post" action="/ui/logout">
              <button type="submit">Sign out</button>
            </form>
          </header>
        )}
        {section !== undefined && banner?.(c)}
        <main>{children}</main>
        {section !== undefined && <footer>Times are shown in {zone}.</footer>}
      </body>
    </html>
  ));
}
