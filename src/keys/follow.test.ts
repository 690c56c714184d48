import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../log.js';
import { API_KEYS_FILE, writeKeyFile } from './file.js';
import { type Following, followKeys } from './follow.js';
import { keptKeys } from './kept.js';
import { createKeyRing } from './ring.js';

const FIRST = 'chk_first-0123456789abcdef';
const SECOND = 'chk_second-0123456789abcdef';

/** A ring following a fresh data dir's key file every 20 ms, with the log lines it wrote. */
function following() {
  const dataDir = mkdtempSync(join(tmpdir(), 'callhook-follow-'));
  writeKeyFile(dataDir, API_KEYS_FILE, [FIRST]);
  const lines: { level: number; msg: string; [field: string]: unknown }[] = [];
  const raw: string[] = [];
  const log = createLogger({
    level: 'info',
    destination: { write: (line: string) => void (raw.push(line), lines.push(JSON.parse(line))) },
  });
  const ring = createKeyRing([FIRST]);
  const kept = keptKeys(API_KEYS_FILE, { dataDir });
  const follow = followKeys(ring, kept, { log, what: 'webhook keys', everyMs: 20 });
  running.push(follow);
  return { dataDir, path: join(dataDir, API_KEYS_FILE), ring, lines, raw };
}

const running: Following[] = [];
afterEach(() => {
  for (const f of running.splice(0)) f.stop();
});

const until = async (probe: () => boolean) => {
  const deadline = Date.now() + 3_000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
};
const polls = (n: number) => new Promise((r) => setTimeout(r, 20 * n));

describe('following a key file', () => {
  it('looks once a second by default, so a key written now is accepted within 2 s (docs/reference.md#start-and-set-up)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const dataDir = mkdtempSync(join(tmpdir(), 'callhook-follow-'));
      writeKeyFile(dataDir, API_KEYS_FILE, [FIRST]);
      const ring = createKeyRing([FIRST]);
      running.push(
        followKeys(ring, keptKeys(API_KEYS_FILE, { dataDir }), {
          log: pino({ level: 'silent' }),
          what: 'webhook keys',
        }),
      );
      writeKeyFile(dataDir, API_KEYS_FILE, [SECOND, FIRST]);
      await vi.advanceTimersByTimeAsync(999);
      expect(ring.accepts(SECOND)).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      // The look itself reads the file (real I/O, not a timer): wait for it, turn by turn.
      for (let turns = 0; !ring.accepts(SECOND) && turns < 10_000; turns++) await new Promise((r) => setImmediate(r));
      expect(ring.accepts(SECOND)).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it('accepts a key added by rename (keys generate) or by an edit in place, and drops one removed', async () => {
    const { dataDir, path, ring, lines } = following();
    writeKeyFile(dataDir, API_KEYS_FILE, [SECOND, FIRST]);
    await until(() => ring.accepts(SECOND));
    expect(ring.accepts(FIRST)).toBe(true);
    writeFileSync(path, `${SECOND}\n`); // an editor that writes in place
    await until(() => !ring.accepts(FIRST));
    expect(ring.keys).toEqual([SECOND]);
    // A poll between the truncation and the write of an edit in place may warn in passing; the reloads are these.
    expect(lines.filter((l) => l.level === 30 && l.msg.includes('read again')).map((l) => l.msg)).toEqual([
      `webhook keys read again from ${path}`,
      `webhook keys read again from ${path}`,
    ]);
  });

  it('keeps the last keys when the file is emptied or removed, warning once a spell and never naming a key', async () => {
    const { dataDir, path, ring, lines, raw } = following();
    writeFileSync(path, '\n');
    await until(() => lines.length > 0);
    await polls(5);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 40,
        msg: `webhook keys: ${path} holds no key; what was accepted before stays accepted`,
        where: path,
        kept: 1,
      }),
    ]);
    expect(ring.keys).toEqual([FIRST]);

    rmSync(path);
    await polls(5);
    expect(lines).toHaveLength(1); // still the same spell: the keys are still not readable

    writeKeyFile(dataDir, API_KEYS_FILE, [SECOND]);
    await until(() => ring.accepts(SECOND));
    rmSync(path);
    await until(() => lines.filter((l) => l.level === 40).length === 2);
    expect(lines.at(-1)).toMatchObject({
      level: 40,
      msg: `webhook keys: ${path} cannot be read (ENOENT); what was accepted before stays accepted`,
    });
    expect(ring.keys).toEqual([SECOND]);
    expect(raw.join('')).not.toMatch(/chk_/);
  });

  it('stops polling when stopped', async () => {
    const { dataDir, ring } = following();
    for (const f of running.splice(0)) f.stop();
    writeKeyFile(dataDir, API_KEYS_FILE, [SECOND]);
    await polls(5);
    expect(ring.keys).toEqual([FIRST]);
  });
});
