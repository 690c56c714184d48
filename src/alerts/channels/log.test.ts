import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { OPENED, RESOLVED } from '../../../test/helpers/alert-messages.js';
import { testMessage } from '../message.js';
import { logChannel } from './log.js';

function captured() {
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'trace', base: undefined }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { log, lines };
}
const signal = new AbortController().signal;

describe('log channel', () => {
  it('writes a warn line when an incident opens and an info line when it resolves or for a test', async () => {
    const { log, lines } = captured();
    const channel = logChannel.open(logChannel.options.parse({}), { name: 'ops-log', log, publicUrl: undefined });
    await channel.send(OPENED, { signal });
    await channel.send(RESOLVED, { signal });
    await channel.send(testMessage(), { signal });
    expect(lines.map((l) => [l.level, l.alert, l.channel])).toEqual([
      [40, 'opened', 'ops-log'],
      [30, 'resolved', 'ops-log'],
      [30, 'test', 'ops-log'],
    ]);
    expect(lines[0]).toMatchObject({
      msg: 'Incident opened: dead_delivery (crm): Deliveries to the sink crm have gone dead',
      incident: OPENED.incident,
    });
    expect(lines[0]).not.toHaveProperty('dashboard');
  });

  it('links the dashboard when public_url is set', async () => {
    const { log, lines } = captured();
    const channel = logChannel.open({}, { name: 'ops-log', log, publicUrl: 'https://calls.example.in' });
    await channel.send(OPENED, { signal });
    expect(lines[0]!.dashboard).toBe('https://calls.example.in/ui/incidents');
  });

  it('takes no options', () => {
    expect(logChannel.options.safeParse({ level: 'warn' }).success).toBe(false);
  });
});
