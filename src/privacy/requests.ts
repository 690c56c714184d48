import type { Logger } from 'pino';
import { type CallDetail, showCall } from '../admin/calls.js';
import { type ReceiptJson, receiptJson } from '../admin/receipts.js';
import { newId } from '../ids.js';
import type { Sink } from '../sinks/sink.js';
import type { AdminQueries } from '../store/admin-queries.js';
import type { ErasureCounts, PersonMatch, PrivacyStore } from '../store/privacy.js';
import { type Person, type PersonRequest, personHash, readPerson } from './person.js';

/**
 * A person's requests (docs/reference.md#access, #erasure): everything kept about them as one document, and all of it
 * erased, in the store and downstream where a sink can erase, with an entry in the erasure log that says when and how
 * much without saying who.
 */

export interface PrivacyDeps {
  store: PrivacyStore &
    Pick<AdminQueries, 'getCall' | 'listReceipts' | 'listDeliveries' | 'listAttempts' | 'listEdits' | 'getReceipt'>;
  /** The running serve's sinks, each with its type: the ones with `erase` remove their copies. */
  sinks: ReadonlyMap<string, { type: string; sink: Pick<Sink, 'erase'> }>;
  log: Logger;
  /** Takes the secrets out of a kept body before it is shown. */
  maskBody?: (bytes: Uint8Array) => Uint8Array;
  /** A number without its country code is read in this region, as at intake. */
  phoneRegion?: string;
}

export interface PersonDocument {
  person: { phone: string } | { email: string };
  /** Nothing is kept about them: no call, no receipt. */
  nothing_kept: boolean;
  calls: (Omit<CallDetail, 'receipts'> & { receipts: ReceiptJson[] })[];
  /** Other requests whose body held them: refused ones, mostly. */
  receipts: ReceiptJson[];
}

/** One sink's part of an erasure. */
export interface SinkErasure {
  sink: string;
  type: string;
  /** The records it was given. */
  record_ids: string[];
  /** What it removed of them; null when it cannot erase (erase them there by hand) or could not now (`error`). */
  erased: number | null;
  error?: string;
}

export interface ErasureReply {
  dry_run: boolean;
  person: PersonDocument['person'];
  nothing_kept: boolean;
  erased: ErasureCounts;
  sinks: SinkErasure[];
}

export interface ErasureCheck {
  person: PersonDocument['person'];
  erased: boolean;
  erasures: { at: string; actor: string; counts: Record<string, unknown> }[];
}

/**
 * How long one sink may take to erase: a redis-stream reads its whole stream to find the entries (no index holds them).
 */
const SINK_ERASE_MS = 10 * 60_000;

const personOf = (person: Person): PersonDocument['person'] =>
  person.kind === 'phone' ? { phone: person.value } : { email: person.value };

const matchOf = (person: Person): PersonMatch =>
  person.kind === 'phone' ? { kind: 'phone', pattern: person.pattern } : { kind: 'email', value: person.value };

export function privacyOperations({ store, sinks, log, maskBody, phoneRegion }: PrivacyDeps) {
  const shown = (receipt: Parameters<typeof receiptJson>[0]) => receiptJson(receipt, maskBody);

  return {
    /** Everything kept about the person (docs/reference.md#access). */
    async show(request: PersonRequest): Promise<PersonDocument> {
      const person = readPerson(request, phoneRegion);
      const { callIds, receiptIds } = await store.findPerson(matchOf(person));
      const calls = await Promise.all(
        callIds.map(async (id) => {
          const detail = await showCall({ store }, id);
          return { ...detail, receipts: detail.receipts.map(shown) };
        }),
      );
      const receipts = (await Promise.all(receiptIds.map((id) => store.getReceipt(id))))
        .filter((r) => r !== undefined)
        .map(shown);
      return { person: personOf(person), nothing_kept: calls.length + receipts.length === 0, calls, receipts };
    },

    /** Erases everything kept about the person, and their copies in the sinks that can erase (docs/reference.md#erasure). */
    async erase(request: PersonRequest, { dryRun, actor }: { dryRun: boolean; actor: string }): Promise<ErasureReply> {
      const person = readPerson(request, phoneRegion);
      const { counts, delivered } = await store.erasePerson(matchOf(person), { dryRun });
      const downstream = await Promise.all(
        delivered.map(async ({ sink: name, recordIds }): Promise<SinkErasure> => {
          const configured = sinks.get(name);
          const part = { sink: name, type: configured?.type ?? 'unknown', record_ids: recordIds };
          const erase = configured?.sink.erase;
          if (!erase) return { ...part, erased: null };
          if (dryRun) return { ...part, erased: 0 };
          try {
            return {
              ...part,
              erased: await erase.call(configured.sink, recordIds, { signal: AbortSignal.timeout(SINK_ERASE_MS), log }),
            };
          } catch (err) {
            const error = err instanceof Error ? err.message : String(err);
            log.warn({ sink: name, records: recordIds.length, error }, 'erasure: the sink could not erase its copies');
            return { ...part, erased: null, error };
          }
        }),
      );
      const nothingKept = Object.values(counts).every((n) => n === 0);
      if (!dryRun && !nothingKept) {
        const at = new Date();
        await store.recordErasure({
          id: newId(at.getTime()),
          at: at.toISOString(),
          actor,
          kind: person.kind,
          hash: personHash(person, await store.erasureKey()),
          counts: {
            ...counts,
            sinks: Object.fromEntries(downstream.map((d) => [d.sink, d.erased ?? (d.error ? 'failed' : 'by hand')])),
          },
        });
        log.info(
          {
            ...counts,
            sinks: downstream.map((d) => ({ sink: d.sink, records: d.record_ids.length, erased: d.erased })),
          },
          'erasure: a person’s data was erased',
        );
      }
      return {
        dry_run: dryRun,
        person: personOf(person),
        nothing_kept: nothingKept,
        erased: counts,
        sinks: downstream,
      };
    },

    /**
     * The person's keyed hash, as their erasure is kept under it: what the audit log names an erasure by
     * (docs/reference.md#audit-log), never their number or address.
     */
    async personHash(request: PersonRequest): Promise<string> {
      return personHash(readPerson(request, phoneRegion), await store.erasureKey());
    },

    /** Whether, and when, the person was erased (`callhook erase --check`). */
    async check(request: PersonRequest): Promise<ErasureCheck> {
      const person = readPerson(request, phoneRegion);
      const entries = await store.erasures(personHash(person, await store.erasureKey()));
      return {
        person: personOf(person),
        erased: entries.length > 0,
        erasures: entries.map(({ at, actor, counts }) => ({ at, actor, counts })),
      };
    },
  };
}

export type PrivacyOperations = ReturnType<typeof privacyOperations>;
