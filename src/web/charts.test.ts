import { describe, expect, it } from 'vitest';
import { BarChart, topBars } from './charts.js';

describe('overview charts', () => {
  it('counts labels ignoring case and spaces, largest first (ties by label), the rest as other', () => {
    expect(topBars(['Order placed', 'order placed ', 'not interested', undefined, ''])).toEqual([
      { label: '(none)', count: 2 },
      { label: 'Order placed', count: 2 },
      { label: 'not interested', count: 1 },
    ]);
    const many = topBars(['a', 'a', 'a', 'b', 'b', 'c', 'd', 'e'], 3);
    expect(many).toEqual([
      { label: 'a', count: 3 },
      { label: 'b', count: 2 },
      { label: 'other', count: 3 },
    ]);
  });

  it('draws each bar with its label and count as escaped text, and says it all in its description', () => {
    const svg = String(
      BarChart({
        id: 'x',
        title: 'By outcome',
        bars: [
          { label: '<script>alert(1)</script>', count: 3 },
          { label: 'ok', count: 1 },
        ],
      }),
    );
    expect(svg).not.toContain('<script>');
    expect(svg).toContain('&lt;script&gt;');
    expect(svg).toMatch(/<svg[^>]*role="img"[^>]*aria-labelledby="x-title x-desc"/);
    expect(svg).toContain('<desc id="x-desc">&lt;script&gt;alert(1)&lt;/script&gt;: 3, ok: 1</desc>');
    expect(String(BarChart({ id: 'y', title: 'None', bars: [] }))).toContain('No calls.');
  });
});
