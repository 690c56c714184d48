import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { IncidentView } from '../admin/incidents.js';
import { IncidentBanner } from './incident-banner.js';

const log = pino({ level: 'silent' });

function incident(rule: string, key: string | null, acknowledged = false): IncidentView {
  return {
    id: `${rule}-${key}`,
    rule,
    key,
    state: 'open',
    summary: rule,
    opened_at: '2026-11-21T10:00:00.000Z',
    last_event: '2026-11-21T10:00:00.000Z',
    acknowledged_at: acknowledged ? '2026-11-21T10:05:00.000Z' : null,
    acknowledged_by: acknowledged ? 'admin-token' : null,
    resolved_at: null,
    counts: {},
    messages: [],
  };
}

/** The banner's words, as a screen reader reads them (the mark is hidden from it). */
async function banner(read: () => Promise<IncidentView[]>): Promise<string> {
  const html = String(await (await IncidentBanner({ read, log }))?.toString());
  return html
    .replace(/<span class="banner-mark" aria-hidden="true">!<\/span>/, '')
    .replace(/<[^>]+>/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

describe('the banner of open incidents', () => {
  it('is nothing while none is open', async () => {
    expect(await IncidentBanner({ read: async () => [], log })).toBeNull();
  });

  it('names each by rule and key, and says which are acknowledged', async () => {
    expect(await banner(async () => [incident('store_outage', null)])).toBe(
      '1 open incident: store_outage. See the incidents',
    );
    expect(await banner(async () => [incident('dead_delivery', 'crm'), incident('no_calls', 'sales', true)])).toBe(
      '2 open incidents: dead_delivery (crm), no_calls (sales, acknowledged). See the incidents',
    );
  });

  it('names the first four and counts the rest', async () => {
    const many = ['a', 'b', 'c', 'd', 'e', 'f'].map((hook) => incident('problem_rate', hook));
    expect(await banner(async () => many)).toBe(
      '6 open incidents: problem_rate (a), problem_rate (b), problem_rate (c), problem_rate (d) and 2 more. See the incidents',
    );
  });

  it('says so when the incidents cannot be read, and logs why', async () => {
    const warned: unknown[] = [];
    const logged = pino({ level: 'warn' }, { write: (line: string) => warned.push(JSON.parse(line)) });
    const node = await IncidentBanner({
      read: () => Promise.reject(new Error('database is locked')),
      log: logged,
    });
    expect(String(await node?.toString())).toContain('Open incidents could not be read');
    expect(warned).toMatchObject([
      { msg: 'dashboard: could not read the open incidents for the banner', err: { message: 'database is locked' } },
    ]);
  });
});
