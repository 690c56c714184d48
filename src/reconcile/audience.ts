import type { Audience, Campaign } from '../client/index.js';
import { toCalendarDate } from '../normalize/formats.js';

/**
 * One audience entry of a campaign (spec 2.7, endpoint 9) read as a call, as the sender would have reported it
 * at the end of that call (spec 6.4). Pure functions: the matching against the store is in reconcile.ts.
 */

const text = (value: unknown): string | undefined => {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
};

/**
 * Whether the entry is a call that took place. The spec shows no state machine (section 3) and no values of
 * `status`, so only evidence counts: a recording, a transcript or a duration. A contact still waiting to be
 * called, or one whose call failed to connect, has none of them and never had a webhook to lose.
 */
export function isPlacedCall(entry: Audience): boolean {
  const seconds = Number(text(entry.call_duration_in_sec) ?? '0');
  return (
    text(entry.recording_url) !== undefined ||
    text(entry.calltranscribe) !== undefined ||
    (Number.isFinite(seconds) && seconds > 0)
  );
}

/**
 * The campaign's start as a calendar date, when the service gave one the receiver can read. The spec types
 * `started_at` as a string only, so both an ISO date-time and anything `Date` understands are taken.
 */
export function campaignDate(campaign: Campaign): string | undefined {
  const started = text(campaign.started_at);
  if (started === undefined) return undefined;
  const date = toCalendarDate(started);
  if (date) return date;
  const parsed = Date.parse(started);
  return Number.isNaN(parsed) ? undefined : new Date(parsed).toISOString().slice(0, 10);
}

/**
 * The fields a webhook of this call would have carried, named as spec 6.4 names them, for the hook's declared
 * parameters to normalise like any webhook's. What the audience knows beyond them (its status, transcript,
 * flags) travels under names no hook declares, so it lands in `extra`. The service knows no outcome or summary:
 * those stay missing and are reported as problems when the hook requires them.
 *
 * `call_id` is stable across runs and replicas: two reconcilers that race on one entry store it once.
 */
export function audienceFields(
  entry: Audience,
  campaign: { id: string; name?: string; date?: string },
): Record<string, unknown> {
  const phone = text(entry.phone);
  const recording = text(entry.recording_url);
  const fields: Record<string, unknown> = {
    call_id: `reconcile:${campaign.id}:${recording ?? phone ?? `${text(entry.first_name) ?? ''} ${text(entry.last_name) ?? ''}`.trim()}`,
    first_name: entry.first_name,
    last_name: entry.last_name,
    phone_number: entry.phone,
    call_date: campaign.date,
    call_duration: entry.call_duration_in_sec,
    sentiment_analysis: entry.call_sentiment,
    recording_url: entry.recording_url,
    campaign_id: campaign.id,
    campaign_name: campaign.name,
    audience_status: entry.status,
    audience_description: entry.description,
    transcript: entry.calltranscribe,
    is_call_transferred: entry.is_call_transferred,
    is_meeting_scheduled: entry.is_meeting_scheduled,
    is_message_sent: entry.is_message_sent,
    audience_error: entry.error,
  };
  // An absent value is left out rather than stored as undefined or "": the record says only what is known.
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined && v !== null && v !== ''));
}
