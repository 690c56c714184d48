import type { Logger } from 'pino';
import { channelType } from './channels/types.js';
import type { ChannelConfig } from './config.js';
import { testMessage } from './message.js';

/** A channel that has not taken its message in this long is said not to have: an operator is waiting on the answer. */
const TEST_TIMEOUT_MS = 20_000;

export interface TestOutcome {
  name: string;
  type: string;
  /** Why the message did not go; undefined when it went. */
  error: string | undefined;
}

/**
 * One test message through each of `channels` (docs/reference.md#alerts), all at once, each opened for it and closed
 * after: what `callhook alerts test` reports. Nothing is stored and no incident is made.
 */
export async function sendTestMessages(
  channels: readonly ChannelConfig[],
  { log, publicUrl, timeoutMs = TEST_TIMEOUT_MS }: { log: Logger; publicUrl: string | undefined; timeoutMs?: number },
): Promise<TestOutcome[]> {
  const message = testMessage();
  return Promise.all(
    channels.map(async ({ name, type, options }): Promise<TestOutcome> => {
      const channel = channelType(type)!.open(options, { name, log, publicUrl });
      const signal = AbortSignal.timeout(timeoutMs);
      try {
        await channel.send(message, { signal });
        return { name, type, error: undefined };
      } catch (err) {
        const why = signal.aborted
          ? `no answer within ${timeoutMs / 1000} s`
          : err instanceof Error
            ? err.message
            : String(err);
        return { name, type, error: why };
      } finally {
        await channel.close?.().catch(() => undefined);
      }
    }),
  );
}
