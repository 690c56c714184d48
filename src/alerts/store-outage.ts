import type { Logger } from 'pino';
import { newId } from '../ids.js';
import type { IncidentRecord, IncidentStore, SentMessage } from '../store/incidents.js';
import type { Maintenance } from '../store/maintenance.js';
import type { RulesConfig } from './config.js';
import { spanText } from './message.js';
import { iso, type Warn } from './open-incidents.js';
import type { AlertSender } from './sender.js';

/**
 * `store_outage` (docs/reference.md#alerts), from memory, as the store cannot be asked: the first commit that fails
 * opens it and its opening is sent at once, not through the store's outbox; the next commit that succeeds (a call's,
 * or the readiness probe's at a tick) ends it, and the whole incident, with how its opening went, is kept in the store
 * then (or at a later tick, until the store takes it).
 */

const SUMMARY = 'The store cannot commit: calls are refused with 503, and the calling service does not send them again';

interface Outage {
  id: string;
  since: number;
  last: number;
  refused: number;
  ended?: number;
  /** The opening, sent from memory: how it went on each channel. */
  sent: Promise<SentMessage[]>;
}

export interface StoreOutage {
  /** A call could not be committed, and was refused with 503. */
  commitFailed(): void;
  /** A call was committed. */
  committed(): void;
  /** The tick's part: keeps the outages that ended, and asks the store whether it commits again. */
  tick(): Promise<void>;
  /** Whether this process is in a store outage. */
  active(): boolean;
}

export interface StoreOutageDeps {
  rules: RulesConfig;
  channels: readonly string[];
  store: Pick<IncidentStore, 'recordIncident'> & Pick<Maintenance, 'ping'>;
  sender: Pick<AlertSender, 'notify' | 'sendNow'>;
  log: Logger;
  warn: Warn;
  now: () => number;
}

export function createStoreOutage({ rules, channels, store, sender, log, warn, now }: StoreOutageDeps): StoreOutage {
  let outage: Outage | undefined;
  /** Outages that ended and are not in the store yet. */
  const unrecorded: Outage[] = [];

  const recordOutage = async (o: Outage) => {
    const incident: IncidentRecord = {
      id: o.id,
      rule: 'store_outage',
      key: null,
      openedAt: iso(o.since),
      lastEventAt: iso(o.last),
      acknowledgedAt: null,
      acknowledgedBy: null,
      resolvedAt: iso(o.ended!),
      counts: { refused: o.refused },
      summary: SUMMARY,
    };
    await store.recordIncident(incident, { kind: 'resolved', channels }, await o.sent);
    unrecorded.splice(unrecorded.indexOf(o), 1);
    log.info(
      { incident: o.id, refused: o.refused },
      `alerts: the store commits again after ${spanText(o.ended! - o.since)}`,
    );
    sender.notify();
  };

  const endOutage = () => {
    const o = outage!;
    outage = undefined;
    o.ended = now();
    unrecorded.push(o);
    recordOutage(o).catch((err: unknown) => warn(err, 'cannot keep the store outage yet; trying again'));
  };

  return {
    commitFailed() {
      if (rules.store_outage === false) return;
      const at = now();
      if (outage) {
        outage.refused += 1;
        outage.last = at;
        return;
      }
      const id = newId(at);
      log.error({ incident: id }, `alerts: incident opened: ${SUMMARY}`);
      const incident = {
        id,
        rule: 'store_outage',
        key: null,
        opened_at: iso(at),
        counts: { refused: 1 },
        summary: SUMMARY,
      };
      outage = { id, since: at, last: at, refused: 1, sent: sender.sendNow({ kind: 'opened', incident }) };
    },

    committed() {
      if (outage !== undefined) endOutage();
    },

    async tick() {
      for (const o of [...unrecorded])
        await recordOutage(o).catch((err: unknown) => warn(err, 'cannot keep the store outage yet; trying again'));
      // A commit is what ends an outage; with no call coming, the readiness probe's commit does.
      if (outage)
        await store.ping().then(
          () => outage && endOutage(),
          () => undefined,
        );
    },

    active: () => outage !== undefined,
  };
}
