import type { CountryCode } from 'libphonenumber-js';
import { type Audience, type CallingServiceClient, type Campaign, campaignId } from '../client/index.js';
import type { createIntake, Hook } from '../intake/pipeline.js';
import { toE164 } from '../normalize/formats.js';
import type { CallRecord } from '../record.js';
import type { AdminQueries, ListCallsQuery } from '../store/admin-queries.js';
import { callPages } from '../store/call-pages.js';
import { audienceFields, campaignDate, isPlacedCall } from './audience.js';

/**
 * Recovers the calls whose webhook never arrived (docs/reference.md#command-line): the sender fires once and never
 * retries (spec 6.3 rules 6 and 8), but the service still lists every call in its campaigns' audiences (endpoints 8,
 * 9).
 *
 * Matching rule, in order, for each audience entry that is a placed call:
 *  1. a stored call (any hook) with the same `recording_url`: the recording is unique to one call;
 *  2. else a stored call with the same phone number (E.164) whose date — its `call_date`, else the day it was
 *     received — falls from the day before the campaign started to MATCH_DAYS after, and whose recording URL,
 *     when both have one, is the same; a call this job stored itself matches by its `call_id` whatever its date.
 * A stored call matches one entry at most, so a caller reached in two campaigns needs two calls.
 * What matches nothing is stored through the same intake as a webhook, with `source: reconcile`.
 */

/** A campaign runs for days; a call's webhook arrives on the day of the call. */
const MATCH_DAYS = 14;
const DAY_MS = 86_400_000;
/** Stored calls read per query while matching. */
const PAGE = 200;

export interface ReconcileOptions {
  client: Pick<CallingServiceClient, 'listCampaigns' | 'campaignAudiences'>;
  store: Pick<AdminQueries, 'listCalls'>;
  /** The end-of-call hook the recovered calls are stored under. */
  hook: Hook;
  ingest: ReturnType<typeof createIntake>;
  region: CountryCode;
  /** Only campaigns started on or after this date (YYYY-MM-DD); campaigns without a readable start are skipped. */
  since?: string;
  dryRun?: boolean;
  onProgress?: (done: number, total: number, campaign: string) => void;
  now?: () => Date;
  /**
   * Asked, with its `call_id`, about each placed call found missing: true leaves it for a later run. The audience
   * lists a call as soon as it ends, when its webhook may still be on its way.
   */
  defer?: (callId: string) => boolean;
  /** The summary to fill as the run goes (emptySummary()), so a caller still has the counts of a run that failed. */
  summary?: ReconcileSummary;
}

export interface RecoveredCall {
  campaign: string;
  name: string;
  phone: string | undefined;
  recordingUrl: string | undefined;
  /** The stored record and its status; absent in a dry run. */
  id?: string;
  status?: 'accepted' | 'held' | 'duplicate';
}

export interface ReconcileSummary {
  campaigns: number;
  entries: number;
  /** Entries that are placed calls (the rest were never connected, so no webhook was due). */
  calls: number;
  /** Placed calls already in the store. */
  matched: number;
  /** What was stored, or in a dry run what would be. */
  recovered: RecoveredCall[];
  /** Missing calls left for a later run by `defer`. */
  deferred: number;
  /** Campaigns left out, with why. */
  skipped: { campaign: string; reason: string }[];
}

export const emptySummary = (): ReconcileSummary => ({
  campaigns: 0,
  entries: 0,
  calls: 0,
  matched: 0,
  recovered: [],
  deferred: 0,
  skipped: [],
});

export async function reconcile(options: ReconcileOptions): Promise<ReconcileSummary> {
  const {
    client,
    store,
    hook,
    ingest,
    region,
    since,
    dryRun = false,
    onProgress,
    now = () => new Date(),
    defer,
    summary = emptySummary(),
  } = options;
  const claimed = new Set<string>();
  const campaigns = await client.listCampaigns();

  for (const [index, campaign] of campaigns.entries()) {
    const id = campaignId(campaign);
    const name = campaign.campaigns_name ?? id ?? `#${index + 1}`;
    onProgress?.(index, campaigns.length, name);
    const date = campaignDate(campaign);
    const skip = skipReason(campaign, id, date, since);
    if (skip) {
      summary.skipped.push({ campaign: name, reason: skip });
      continue;
    }
    summary.campaigns++;
    for (const entry of await client.campaignAudiences(id!)) {
      summary.entries++;
      if (!isPlacedCall(entry)) continue;
      summary.calls++;
      const fields = audienceFields(entry, { id: id!, name: campaign.campaigns_name, date });
      if (await findStored(store, entry, fields.call_id as string, date, region, claimed)) {
        summary.matched++;
        continue;
      }
      if (defer?.(fields.call_id as string)) {
        summary.deferred++;
        continue;
      }
      const recovered: RecoveredCall = {
        campaign: name,
        name: [entry.first_name, entry.last_name].filter(Boolean).join(' '),
        phone: entry.phone || undefined,
        recordingUrl: entry.recording_url || undefined,
      };
      if (!dryRun) {
        const reply = await ingest({
          hook,
          fields,
          raw: rawOf(id!, entry),
          source: 'reconcile',
          receipt: receiptOf(hook, entry, now()),
        });
        claimed.add(reply.id);
        // Another reconciler (a replica) stored it between the lookup and now: it is not ours to report.
        if (reply.status === 'duplicate') {
          summary.matched++;
          continue;
        }
        Object.assign(recovered, { id: reply.id, status: reply.status });
      }
      summary.recovered.push(recovered);
    }
  }
  onProgress?.(campaigns.length, campaigns.length, '');
  return summary;
}

function skipReason(
  campaign: Campaign,
  id: string | undefined,
  date: string | undefined,
  since: string | undefined,
): string | undefined {
  // The campaign list shows no identifier (spec 2.7); without one its audience cannot be asked for.
  if (id === undefined) return 'the service gave no campaign id';
  if (campaign.is_started === false) return 'not started';
  if (since !== undefined && date === undefined) return 'no readable start date to compare with --since';
  if (since !== undefined && date! < since) return `started ${date}, before ${since}`;
  return undefined;
}

/** The stored call this entry is, by the matching rule above; it is claimed so no other entry takes it. */
async function findStored(
  store: Pick<AdminQueries, 'listCalls'>,
  entry: Audience,
  callId: string,
  date: string | undefined,
  region: CountryCode,
  claimed: Set<string>,
): Promise<boolean> {
  const take = (record: CallRecord) => {
    if (claimed.has(record.id)) return false;
    claimed.add(record.id);
    return true;
  };
  const recording = entry.recording_url?.trim() || undefined;
  if (recording) {
    for (const record of await allCalls(store, { recordingUrl: recording })) if (take(record)) return true;
  }
  const phone = entry.phone ? toE164(entry.phone, region) : undefined;
  const day = date === undefined ? undefined : Date.parse(`${date}T00:00:00Z`);
  // Nothing of this campaign arrived before the day before it started, neither a webhook nor a record this job
  // stored: older calls of a regular caller are left unread however many there are.
  const from = day === undefined ? undefined : new Date(day - DAY_MS).toISOString();
  const candidates = phone
    ? await allCalls(store, { phone, from })
    : // Without a number only this job's own earlier record can be recognised, by its call_id.
      await allCalls(store, { text: callId, from });
  const isOwn = (record: CallRecord) => record.data.call_id === callId || record.extra.call_id === callId;
  const own = candidates.find((record) => isOwn(record) && !claimed.has(record.id));
  if (own) return take(own);
  if (!phone) return false;
  for (const record of candidates) {
    if (isOwn(record)) continue;
    const theirs = typeof record.data.recording_url === 'string' ? record.data.recording_url : undefined;
    if (recording && theirs && theirs !== recording) continue;
    if (day !== undefined && !withinWindow(record, day)) continue;
    if (take(record)) return true;
  }
  return false;
}

/** Every stored call the query finds, oldest first. */
async function allCalls(
  store: Pick<AdminQueries, 'listCalls'>,
  query: Omit<ListCallsQuery, 'after' | 'limit'>,
): Promise<CallRecord[]> {
  const records: CallRecord[] = [];
  for await (const page of callPages(store, query, PAGE)) records.push(...page.map((call) => call.record));
  return records;
}

function withinWindow(record: CallRecord, campaignDay: number): boolean {
  const when = typeof record.data.call_date === 'string' ? record.data.call_date : record.received_at.slice(0, 10);
  const t = Date.parse(`${when}T00:00:00Z`);
  return t >= campaignDay - DAY_MS && t <= campaignDay + MATCH_DAYS * DAY_MS;
}

/** The request this record stands for: the audience read of endpoint 9, kept as `raw` like a webhook's body. */
function rawOf(campaign: string, entry: Audience) {
  return { method: 'POST', content_type: 'application/json', query: { id: campaign }, body: JSON.stringify(entry) };
}

function receiptOf(hook: Hook, entry: Audience, at: Date) {
  return {
    hook: hook.config.name,
    receivedAt: at.toISOString(),
    method: 'RECONCILE',
    contentType: 'application/json',
    size: Buffer.byteLength(JSON.stringify(entry)),
  };
}
