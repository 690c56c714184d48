/**
 * Bar charts drawn on the server as SVG (docs/reference.md#dashboard: the overview's charts, readable on a phone): no
 * script, no library. The drawing is 320 units wide, the width of a phone, and scales up on a wider screen; every
 * bar carries its label and count as text, so the chart reads without colour and without hovering.
 */

export interface Bar {
  label: string;
  count: number;
}

const WIDTH = 320;
const ROW = 26;
const LABEL = 128;
const COUNT = 46;

/** Known words get their own colour (a sentiment's); anything else the accent. */
const COLOURS: Record<string, string> = {
  positive: '#2e7d32',
  neutral: '#6b7785',
  negative: '#c62828',
  mixed: '#b26a00',
  '(none)': '#9aa3ae',
  other: '#9aa3ae',
};

export function BarChart({
  id,
  title,
  bars,
  empty = 'No calls.',
}: {
  id: string;
  title: string;
  bars: readonly Bar[];
  empty?: string;
}) {
  const max = Math.max(1, ...bars.map((b) => b.count));
  const height = Math.max(1, bars.length) * ROW + 4;
  const track = WIDTH - LABEL - COUNT;
  const summary = bars.length === 0 ? empty : bars.map((b) => `${b.label}: ${b.count}`).join(', ');
  return (
    <figure>
      <figcaption id={`${id}-title`}>{title}</figcaption>
      {/* biome-ignore lint/a11y/noSvgWithoutTitle: the figure's <figcaption> names it, through aria-labelledby. */}
      <svg
        class="chart"
        viewBox={`0 0 ${WIDTH} ${height}`}
        role="img"
        aria-labelledby={`${id}-title ${id}-desc`}
        preserveAspectRatio="xMinYMin meet"
      >
        <desc id={`${id}-desc`}>{summary}</desc>
        {bars.length === 0 && (
          <text x="0" y="18">
            {empty}
          </text>
        )}
        {bars.map((bar, i) => {
          const y = i * ROW + 2;
          const width = bar.count === 0 ? 0 : Math.max(2, Math.round((bar.count / max) * track));
          return (
            <g>
              <text x="0" y={y + 16}>
                {shorten(bar.label, 19)}
              </text>
              <rect class="track" x={LABEL} y={y + 3} width={track} height={ROW - 8} rx="3" />
              <rect
                x={LABEL}
                y={y + 3}
                width={width}
                height={ROW - 8}
                rx="3"
                fill={COLOURS[bar.label.toLowerCase()] ?? '#1f5fbf'}
              />
              <text x={WIDTH - 2} y={y + 16} text-anchor="end">
                {String(bar.count)}
              </text>
            </g>
          );
        })}
      </svg>
    </figure>
  );
}

function shorten(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * The `max` largest counts by label, the rest as `other`; labels are compared ignoring case and surrounding space
 * (as the calls filter compares outcomes), each shown as its most frequent spelling.
 */
export function topBars(values: Iterable<string | undefined>, max = 7): Bar[] {
  const counts = new Map<string, { count: number; spellings: Map<string, number> }>();
  for (const value of values) {
    const spelled = value === undefined || value.trim() === '' ? '(none)' : value.trim();
    const key = spelled.toLowerCase();
    const entry = counts.get(key) ?? { count: 0, spellings: new Map() };
    entry.count++;
    entry.spellings.set(spelled, (entry.spellings.get(spelled) ?? 0) + 1);
    counts.set(key, entry);
  }
  const bars = [...counts.values()]
    .map(({ count, spellings }) => ({ label: [...spellings].sort((a, b) => b[1] - a[1])[0]![0], count }))
    .sort((a, b) => b.count - a.count || a.label.localeCompare(b.label));
  if (bars.length <= max) return bars;
  const rest = bars.slice(max - 1).reduce((sum, b) => sum + b.count, 0);
  return [...bars.slice(0, max - 1), { label: 'other', count: rest }];
}
