import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startReceiver } from './helpers/receiver.js';
import { jsonlRecords, post, readStoreFile, sampleCall, spawnServer, tempDir, until } from './helpers/server.js';

/**
 * The crash test: thousands of unique calls fired at a real receiver that is killed with SIGKILL at random moments
 * (mid-request, mid-commit, mid-delivery: deliveries go to a slow HTTP sink, so some are always in flight), and
 * restarted on the same data each time. Every call that got a 200 must be stored once and reach every sink.
 */

const REQUESTS = 10_000;
const KILLS = 5;
const IN_FLIGHT = 32;

describe('the receiver killed again and again under load', () => {
  it(`loses no acknowledged call over ${KILLS} kills and ${REQUESTS} requests`, { timeout: 240_000 }, async () => {
    const sink = await startReceiver(async (_req, res) => {
      await new Promise((r) => setTimeout(r, 20));
      res.writeHead(200).end('ok');
    });
    const dataDir = tempDir();
    const config = join(dataDir, 'callhook.json');
    writeFileSync(
      config,
      JSON.stringify({
        sinks: [
          { name: 'jsonl', type: 'jsonl' },
          { name: 'crm', type: 'http', url: sink.url, concurrency: 16 },
        ],
      }),
    );
    const env = { CALLHOOK_CONFIG: config, LOG_LEVEL: 'error' };

    const acknowledged = new Map<string, string>(); // call_id → record id
    let sent = 0;
    let failed = 0;
    const kills: { atRequest: number; inFlight: number }[] = [];

    // KILLS rounds end in a SIGKILL at a random request; what a round did not send, the next one sends; the last
    // round sends the rest, then lets every delivery finish.
    const share = Math.ceil(REQUESTS / (KILLS + 1));
    for (let round = 0; round <= KILLS; round++) {
      const server = await spawnServer(dataDir, env);
      // A call acknowledged before a crash and sent again after it is a duplicate of the stored one.
      for (const [callId, id] of [...acknowledged].slice(-20)) {
        const reply = await (await post(server.url, sampleCall({ call_id: callId }))).json();
        expect(reply, callId).toMatchObject({ status: 'duplicate', id });
      }
      const last = round === KILLS;
      const target = last ? REQUESTS : (round + 1) * share;
      const killAt = last ? Infinity : sent + Math.floor((target - sent) * (0.3 + 0.6 * Math.random()));
      let inFlight = 0;
      let killed = false;
      const fire = async (): Promise<void> => {
        while (sent < target && !killed) {
          const callId = `crash-${sent++}`;
          inFlight++;
          if (sent >= killAt && !killed) {
            killed = true;
            kills.push({ atRequest: sent, inFlight });
            server.child.kill('SIGKILL');
          }
          try {
            const res = await post(server.url, sampleCall({ call_id: callId }));
            const reply = await res.json();
            if (res.status === 200) acknowledged.set(callId, reply.id);
          } catch {
            failed++; // no reply: the sender records a failed delivery, and the receiver owes nothing
          } finally {
            inFlight--;
          }
        }
      };
      await Promise.all(Array.from({ length: IN_FLIGHT }, fire));
      if (!last) {
        await server.exited;
        continue;
      }
      await drained(acknowledged, sink.received, dataDir);
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    }

    const { stored, undelivered } = readStoreFile(dataDir, (db) => ({
      stored: db.prepare(`SELECT dedup_key, COUNT(*) AS n FROM calls GROUP BY dedup_key`).all() as {
        dedup_key: string;
        n: number;
      }[],
      undelivered: db.prepare(`SELECT COUNT(*) FROM deliveries WHERE state != 'done'`).pluck().get(),
    }));
    const storedKeys = new Set(stored.map((s) => s.dedup_key));
    const lost = [...acknowledged.keys()].filter((callId) => !storedKeys.has(`call_id:${callId}`));
    const jsonl = jsonlRecords(dataDir);
    const crmIds = new Set(sink.received.map((r) => JSON.parse(r.body).id as string));
    await sink.close();

    console.log(
      `crash test: ${sent} sent, ${acknowledged.size} acknowledged, ${failed} without reply, ${stored.length} stored, ` +
        `${kills.length} kills at requests ${kills.map((k) => `${k.atRequest} (${k.inFlight} in flight)`).join(', ')}; ` +
        `lost ${lost.length}; jsonl lines ${jsonl.length}; crm got ${crmIds.size} calls in ${sink.received.length} requests`,
    );
    expect(kills).toHaveLength(KILLS);
    expect(sent).toBeGreaterThanOrEqual(REQUESTS - KILLS);
    expect(lost).toEqual([]);
    expect(stored.every((s) => s.n === 1)).toBe(true);
    expect(undelivered).toBe(0);
    expect(jsonl.length).toBe(new Set(jsonl.map((r) => r.id)).size);
    const jsonlIds = new Set(jsonl.map((r) => r.id));
    expect([...acknowledged.values()].filter((id) => !jsonlIds.has(id))).toEqual([]);
    expect([...acknowledged.values()].filter((id) => !crmIds.has(id))).toEqual([]);
  });
});

async function drained(
  acknowledged: Map<string, string>,
  received: { body: string }[],
  dataDir: string,
): Promise<void> {
  const expected = [...acknowledged.values()];
  await until(
    () => {
      const crm = new Set(received.map((r) => JSON.parse(r.body).id as string));
      const jsonl = new Set(jsonlRecords(dataDir).map((r) => r.id));
      return expected.every((id) => crm.has(id) && jsonl.has(id));
    },
    { timeoutMs: 90_000, everyMs: 500 },
  );
}
