import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/server.js';
import { loadConfig } from '../config.js';

/** A platform hook in the config (docs/reference.md#other-voice-platforms): read with its defaults, or refused naming the key. */
function load(yaml: string) {
  const path = join(tempDir(), 'callhook.yaml');
  writeFileSync(path, yaml);
  return loadConfig({}, path);
}

function refusal(yaml: string): string {
  try {
    load(yaml);
  } catch (err) {
    return (err as Error).message.replace(/^config file \S+: /, '');
  }
  return 'accepted';
}

describe('a platform hook in the config', () => {
  it('reads the platform, its secret, drop and its options, and dedups on the call id', () => {
    const config = load(
      'hooks:\n  vapi-calls: { platform: vapi, secret: s3cret-vapi-value, drop: [transcript], auth: hmac, algorithm: sha512 }\n  retell: { platform: retell, secret: key_0123456789 }\n',
    );
    expect(config.hooks.get('vapi-calls')).toMatchObject({
      dedup: ['call_id'],
      platform: {
        name: 'vapi',
        secret: 's3cret-vapi-value',
        drop: ['transcript'],
        options: { auth: 'hmac', header: 'x-signature', timestamp_header: 'x-timestamp', algorithm: 'sha512' },
      },
    });
    expect(config.hooks.get('retell')?.platform).toMatchObject({ name: 'retell', drop: [], options: {} });
    expect(config.hooks.get('end-of-call')?.platform).toBeUndefined();
  });

  it('gives each platform the body limit it sends, or body_limit when that is larger', () => {
    expect(
      load('hooks:\n  e: { platform: elevenlabs, secret: wsec_0123456789 }\n').hooks.get('e')?.platform?.bodyLimitBytes,
    ).toBe(50 * 1024 * 1024);
  });

  it('refuses each mistake with one line naming the key', () => {
    expect(refusal('hooks:\n  v: { platform: vapi }\n')).toMatch(
      /^hooks\.v\.secret: a vapi hook needs the platform's secret/,
    );
    expect(refusal('hooks:\n  v: { platform: zoom, secret: x0123456789 }\n')).toMatch(/^hooks\.v\.platform: /);
    expect(refusal('hooks:\n  v: { platform: vapi, secret: x0123456789, keys: [k0123456789abcdef] }\n')).toMatch(
      /^hooks\.v\.keys: a vapi hook is authenticated by the platform's own signature/,
    );
    expect(refusal('hooks:\n  v: { secret: x0123456789 }\n')).toBe(
      'hooks.v.secret: only a hook with a platform has a secret',
    );
    expect(refusal('hooks:\n  v: { drop: [transcript] }\n')).toBe(
      'hooks.v.drop: only a hook with a platform has a drop',
    );
    expect(refusal('hooks:\n  v: { kind: in-call, platform: vapi, secret: x0123456789 }\n')).toMatch(
      /^hooks\.v\.platform: an in-call hook has no platform/,
    );
    expect(refusal('hooks:\n  v: { platform: vapi, secret: x0123456789, auth: oauth }\n')).toMatch(/^hooks\.v\.auth: /);
    expect(refusal('hooks:\n  b: { platform: bland, secret: x0123456789, auth: hmac }\n')).toBe(
      'hooks.b.auth: a bland hook has no auth',
    );
    expect(
      refusal(
        'hooks:\n  r: { platform: retell, secret: key_0123456789 }\nreconcile: { api_url: "https://api.example.in", api_key: k0123456789, hook: r }\n',
      ),
    ).toMatch(/^reconcile\.hook: "r" is a retell hook; reconcile recovers the calling service's calls/);
  });
});
