/** Medians, number formats, and one table rendered twice: aligned text for the terminal, Markdown for the file. */

export interface Table {
  headers: readonly string[];
  rows: readonly (readonly string[])[];
}

/** The middle value; the mean of the two middle ones for an even count. NaN for none. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const grouped = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export const format = {
  rps: (n: number) => (Number.isFinite(n) ? `${grouped.format(n)} req/s` : 'n/a'),
  ms: (n: number) => (!Number.isFinite(n) ? 'n/a' : n < 10 ? n.toFixed(2) : n < 100 ? n.toFixed(1) : n.toFixed(0)),
  mb: (bytes: number) => (Number.isFinite(bytes) ? `${(bytes / 1024 / 1024).toFixed(0)} MB` : 'n/a'),
  seconds: (n: number) => (Number.isFinite(n) ? `${n.toFixed(1)} s` : 'n/a'),
  ratio: (n: number) => (Number.isFinite(n) ? `${n.toFixed(2)} ×` : 'n/a'),
  count: (n: number) => grouped.format(n),
};

export function formatText({ headers, rows }: Table): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function formatMarkdown({ headers, rows }: Table): string {
  // A pipe inside a cell would end it early.
  const line = (cells: readonly string[]) => `| ${cells.map((c) => c.replaceAll('|', '\\|')).join(' | ')} |`;
  return [line(headers), line(headers.map(() => '---')), ...rows.map(line)].join('\n');
}
