import type { Child } from 'hono/jsx';
import type { Clock } from './time.js';

/** Small pieces the pages share. Everything a page shows goes through JSX, which escapes it: never `raw()`. */

export function Note({ kind, children }: { kind: 'ok' | 'error' | 'info'; children?: Child }) {
  return (
    <p class={`note ${kind}`} role={kind === 'error' ? 'alert' : kind === 'ok' ? 'status' : undefined}>
      {children}
    </p>
  );
}

export function Tag({ kind, children }: { kind: 'ok' | 'bad' | 'warn' | 'plain'; children?: Child }) {
  return <span class={`tag ${kind}`}>{children}</span>;
}

export function Time({ at, clock }: { at: string | number | null | undefined; clock: Clock }) {
  if (at === null || at === undefined) return <span class="muted">—</span>;
  const iso = new Date(at).toISOString();
  return (
    <time class="nowrap" datetime={iso}>
      {clock.show(at)}
    </time>
  );
}

/** A JSON value or a text, shown as it is (pre-formatted, escaped). */
export function Pre({ value, label }: { value: unknown; label: string }) {
  const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  // A scrolling region is reachable by keyboard, and named for a screen reader.
  return (
    // biome-ignore lint/a11y/useAriaPropsSupportedByRole: a focusable scrolling region needs a name (axe checks it).
    <pre tabindex={0} aria-label={label}>
      {text}
    </pre>
  );
}

/** A table in a box that scrolls sideways on a narrow screen, so the page itself never does. */
export function Scroll({ label, children }: { label: string; children?: Child }) {
  return (
    // biome-ignore lint/a11y/useSemanticElements: a scrolling box is a region, not a <section> of the document outline.
    <div class="scroll" role="region" aria-label={label} tabindex={0}>
      {children}
    </div>
  );
}

/** A column of a CardTable: its header, right-aligned (`num`) when it holds figures. */
export type Column = string | { text: string; num: true };

/**
 * A table in a region of its own that scrolls sideways on a narrow screen and reads as one card a row on a phone
 * (style.ts `table.cards`): its header cells from `columns`, its rows the children.
 */
export function CardTable({
  label,
  columns,
  children,
}: {
  label: string;
  columns: readonly Column[];
  children?: Child;
}) {
  return (
    <Scroll label={label}>
      <table class="cards">
        <thead>
          <tr>
            {columns.map((column) =>
              typeof column === 'string' ? (
                <th scope="col">{column}</th>
              ) : (
                <th scope="col" class="num">
                  {column.text}
                </th>
              ),
            )}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </Scroll>
  );
}

/**
 * One field of a list's filter form: a choice of one value or "any" (the empty value). `name` is both the select's
 * id and its query parameter; `text` words a value for an operator.
 */
export function FilterSelect({
  name,
  label,
  choices,
  chosen,
  text = (value) => value,
}: {
  name: string;
  label: string;
  choices: readonly string[];
  chosen: string | undefined;
  text?: (value: string) => string;
}) {
  return (
    <div>
      <label for={name}>{label}</label>
      <select id={name} name={name}>
        <option value="">any</option>
        {choices.map((value) => (
          <option value={value} selected={chosen === value}>
            {text(value)}
          </option>
        ))}
      </select>
    </div>
  );
}

/** A link to the next page of a list (cursor paging) and back to the first. */
export function Pager({
  path,
  query,
  next,
  first,
}: {
  path: string;
  query: Record<string, string | undefined>;
  next: string | number | null;
  first: boolean;
}) {
  const href = (after?: string | number) => {
    const params = new URLSearchParams(
      Object.entries(query).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== '' && e[0] !== 'after'),
    );
    if (after !== undefined) params.set('after', String(after));
    const text = params.toString();
    return text === '' ? path : `${path}?${text}`;
  };
  if (next === null && first) return null;
  return (
    <nav class="pager" aria-label="Pages">
      {!first && <a href={href()}>First page</a>}
      {next !== null && <a href={href(next)}>Next page</a>}
    </nav>
  );
}

/**
 * What a form that acts leaves on the page it redirects to: a fixed sentence chosen by code, never text from the URL.
 */
export function Done({ messages, code }: { messages: Record<string, string>; code: string | undefined }) {
  const message = code === undefined ? undefined : messages[code];
  return message === undefined ? null : <Note kind="ok">{message}</Note>;
}
