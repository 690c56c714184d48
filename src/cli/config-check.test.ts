import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { resolveConfiguredSinks } from '../sinks/registry.js';
import { describeConfig } from './config-check.js';

describe('config check output (docs/reference.md#secrets)', () => {
  it('masks every secret shape and shows a ${VAR} value that is no secret as the variable', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'callhook-config-check-'));
    const path = join(dir, 'callhook.yaml');
    writeFileSync(
      path,
      [
        'sinks:',
        '  - name: crm',
        '    type: http',
        '    url: "https://crm.example.com/in?access_token=access-token-0123&page=2"',
        '    headers: { X-Api-Key: header-key-0123456789, X-Campaign: "${CAMPAIGN}" }',
        '  - { name: alerts, type: slack, webhook_url: "https://hooks.slack.com/services/T0/B0/slack-0123", channel: "${CHANNEL}", test_traffic: true }',
        '  - { name: file, type: jsonl }',
      ].join('\n'),
    );
    const env = {
      CALLHOOK_DATA_DIR: dir,
      CALLHOOK_API_KEYS: 'webhook-key-0123456789',
      CALLHOOK_ADMIN_TOKEN: 'admin-token-0123456789',
      // Nothing listens there: the check does not need the database, and says so without failing.
      DATABASE_URL: 'postgres://app:user-pass-0123@127.0.0.1:1/calls?password=query-pass-0123',
      CAMPAIGN: 'campaign-0123',
      CHANNEL: '#sales-calls',
    };
    const config = loadConfig(env, path);
    const out = await describeConfig(config, await resolveConfiguredSinks(config));
    for (const secret of [
      'access-token-0123',
      'header-key-0123456789',
      'campaign-0123',
      'slack-0123',
      'user-pass-0123',
      'query-pass-0123',
      'webhook-key-0123456789',
      'admin-token-0123456789',
    ]) {
      expect(out, secret).not.toContain(secret);
    }
    const shown = JSON.parse(out);
    expect(shown.sinks[0]).toMatchObject({
      url: 'https://crm.example.com/in?access_token=***&page=2',
      headers: { 'X-Api-Key': '***', 'X-Campaign': '***' },
    });
    expect(shown.sinks[1]).toMatchObject({ webhook_url: '***', channel: '${CHANNEL}' });
    // docs/reference.md#test-traffic: each sink says whether it takes test traffic, its type's default when unset.
    expect(shown.sinks.map((s: { test_traffic: boolean }) => s.test_traffic)).toEqual([false, true, true]);
    expect(shown.store.url).toBe('postgres://app:***@127.0.0.1:1/calls?password=***');
    expect(shown).toMatchObject({ trust_proxy: false, metrics_token: '(none: /metrics is open)' });
    const guarded = JSON.parse(
      await describeConfig(loadConfig({ ...env, CALLHOOK_METRICS_TOKEN: 'metrics-token-0123456789' }, path), []),
    );
    expect(guarded.metrics_token).toBe('***');
  });
});
