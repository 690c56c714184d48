import type { Logger } from 'pino';
import { attemptError } from '../delivery/attempt-error.js';
import { attemptOutcome } from '../delivery/attempt-outcome.js';
import { type RetryPolicy, toRetryPolicy } from '../sinks/policy.js';
import type { ClaimedAlertMessage, IncidentStore, SentMessage } from '../store/incidents.js';
import type { Channel } from './channels/channel.js';
import { channelType } from './channels/types.js';
import type { ChannelConfig } from './config.js';
import { type AlertMessage, messageIncident } from './message.js';

/**
 * The alert messages' outbox worker (docs/reference.md#alerts): it leases due messages from the store, sends each
 * through its channel and records the attempt, retried on the channel's `retry` schedule as a delivery is on its sink's
 * (delivery/attempt-outcome.ts), and dead after the last. A dead message is kept on its incident for the operator to
 * see; it opens no incident of its own, or a channel that is down would alert about itself for ever.
 */

/** One message's attempt may take this long; then it is retried like any failure. */
const ATTEMPT_TIMEOUT_MS = 30_000;
/** A message leased and not finished in this long (a killed process) is sent again by the next claim. */
const LEASE_MS = ATTEMPT_TIMEOUT_MS + 30_000;
const BATCH = 20;

export interface AlertSender {
  start(): void;
  /** Something was queued: look now rather than at the next poll. */
  notify(): void;
  /**
   * Sends `message` through every channel at once, one attempt each, without the store: `store_outage`'s opening,
   * which cannot wait for the store (docs/reference.md#alerts). Says how each went, to be kept once the store is back.
   */
  sendNow(message: AlertMessage): Promise<SentMessage[]>;
  /** Aborts the attempts under way (their leases expire, and the next serve sends them) and closes the channels. */
  stop(): Promise<void>;
}

export interface AlertSenderOptions {
  store: Pick<IncidentStore, 'claimAlertMessages' | 'finishAlertMessage' | 'nextAlertDueIn'>;
  channels: readonly ChannelConfig[];
  log: Logger;
  publicUrl: string | undefined;
  /** Takes secrets out of an attempt's error before it is kept (docs/reference.md#secrets). */
  mask?: (text: string) => string;
  /** Longest sleep between looks at the outbox. */
  idleMs?: number;
}

interface OpenChannel {
  channel: Channel;
  retry: RetryPolicy;
}

export function createAlertSender({
  store,
  channels,
  log,
  publicUrl,
  mask = (text) => text,
  idleMs = 1_000,
}: AlertSenderOptions): AlertSender {
  const open = new Map<string, OpenChannel>(
    channels.map(({ name, type, options, retry }) => [
      name,
      { channel: channelType(type)!.open(options, { name, log, publicUrl }), retry: toRetryPolicy(retry) },
    ]),
  );
  const stopping = new AbortController();
  let wake: (() => void) | undefined;
  let woken = false;
  let loop: Promise<void> | undefined;

  const attempt = async (message: ClaimedAlertMessage): Promise<void> => {
    const target = open.get(message.channel);
    const alert: AlertMessage = { kind: message.kind, incident: messageIncident(message.incident) };
    try {
      // A channel removed from the config since the message was queued: nothing can send it.
      if (!target) throw new Error(`no alert channel "${message.channel}" in the config`);
      const signal = AbortSignal.any([stopping.signal, AbortSignal.timeout(ATTEMPT_TIMEOUT_MS)]);
      await target.channel.send(alert, { signal });
      await store.finishAlertMessage(message.id, message.attempt, { outcome: 'ok' });
    } catch (err) {
      if (stopping.signal.aborted) return;
      const failed = target
        ? attemptOutcome(err, message.attempt, target.retry)
        : { attempt: { outcome: 'dead' as const, error: (err as Error).message }, retryAt: undefined };
      const error = attemptError(failed.attempt.error ?? String(err), mask);
      const outcome = failed.attempt.outcome;
      await store.finishAlertMessage(message.id, message.attempt, { outcome, error }, failed.retryAt);
      log[outcome === 'dead' ? 'error' : 'warn'](
        { channel: message.channel, incident: message.incident.id, attempt: message.attempt, error },
        outcome === 'dead'
          ? 'an alert message could not be sent and is given up on'
          : 'an alert message failed; retrying',
      );
    }
  };

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (woken || stopping.signal.aborted) return resolve();
      const timer = setTimeout(done, ms);
      timer.unref();
      function done() {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      }
      wake = done;
    });

  const run = async () => {
    while (!stopping.signal.aborted) {
      woken = false;
      try {
        const claimed = await store.claimAlertMessages(BATCH, LEASE_MS);
        await Promise.all(claimed.map(attempt));
        if (claimed.length === BATCH) continue;
        const due = await store.nextAlertDueIn();
        await sleep(Math.min(due ?? idleMs, idleMs));
      } catch (err) {
        // The store is down: the messages wait in it, or in memory for store_outage (store-outage.ts).
        log.debug({ err }, 'alert messages: cannot read the outbox');
        await sleep(idleMs);
      }
    }
  };

  return {
    start() {
      loop ??= run();
    },
    sendNow: (message) =>
      Promise.all(
        [...open].map(async ([name, { channel }]): Promise<SentMessage> => {
          const kind = message.kind === 'resolved' ? 'resolved' : 'opened';
          try {
            const signal = AbortSignal.any([stopping.signal, AbortSignal.timeout(ATTEMPT_TIMEOUT_MS)]);
            await channel.send(message, { signal });
            return { channel: name, kind, state: 'done', error: null };
          } catch (err) {
            const error = attemptError(err instanceof Error ? err.message : String(err), mask);
            log.error({ channel: name, incident: message.incident.id, error }, 'an alert message could not be sent');
            return { channel: name, kind, state: 'dead', error };
          }
        }),
      ),
    notify() {
      woken = true;
      wake?.();
    },
    async stop() {
      stopping.abort();
      wake?.();
      await loop;
      await Promise.allSettled([...open.values()].map(({ channel }) => channel.close?.()));
    },
  };
}
