import type { CallRecord } from '../../record.js';
import { text, truncate } from '../shared/record-fields.js';
import type { HubSpotClient } from './client.js';

/**
 * The call as a HubSpot call engagement on the contact's timeline (docs/reference.md#crm-sinks;
 * https://developers.hubspot.com/docs/api/crm/calls). Its title holds the record id, so a repeated delivery finds
 * it with a search and adds nothing, and an edited call (a higher revision) updates it.
 */

/**
 * Contact → call is HUBSPOT_DEFINED type 194 in the other direction, call → contact
 * (https://developers.hubspot.com/docs/api/crm/associations, "Association type ID values").
 */
export const CALL_TO_CONTACT = 194;

/** hs_call_body is rich text; a summary past this is cut so the timeline stays readable. */
const BODY_CHARS = 10_000;

export function callTitle(record: CallRecord): string {
  return `callhook ${record.id}`;
}

/** The documented call properties (https://developers.hubspot.com/docs/api/crm/calls, "Properties"). */
export function callProperties(record: CallRecord): Record<string, string | number> {
  const value = (field: string) => text(record, field);
  const properties: Record<string, string | number> = {
    // Required: where the call sits on the timeline. ISO 8601 UTC is accepted as well as epoch milliseconds.
    hs_timestamp: record.received_at,
    hs_call_title: callTitle(record),
    hs_call_body: callBody(record),
    hs_call_status: 'COMPLETED',
  };
  const seconds = Number(record.data.call_duration);
  if (record.data.call_duration !== undefined && Number.isFinite(seconds) && seconds >= 0)
    properties.hs_call_duration = Math.round(seconds * 1000);
  const recording = value('recording_url');
  if (recording && URL.canParse(recording) && /^https?:$/.test(new URL(recording).protocol))
    properties.hs_call_recording_url = recording;
  return properties;
}

/** Outcome, sentiment and summary as short paragraphs, the caller's words escaped: the property is HTML. */
function callBody(record: CallRecord): string {
  const lines = [
    ['Outcome', text(record, 'call_outcome')],
    ['Sentiment', text(record, 'sentiment_analysis')],
    ['Summary', text(record, 'call_summary')],
  ].filter((line): line is [string, string] => line[1] !== undefined);
  return truncate(
    lines.map(([label, said]) => `<p><strong>${label}:</strong> ${escapeHtml(said)}</p>`).join(''),
    BODY_CHARS,
  );
}

function escapeHtml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/**
 * The engagements already made for this record: `POST /crm/v3/objects/calls/search` on `hs_call_title`. HubSpot's index
 * lags a new object by seconds; the worker's first retry comes later than that (docs/reference.md#crm-sinks), and a
 * repeat that does not wait finds what this process made in recent.ts.
 */
export async function findCalls(client: HubSpotClient, record: CallRecord): Promise<string[]> {
  const title = callTitle(record);
  const reply = await client.request<{ results?: { id: string; properties: { hs_call_title?: string | null } }[] }>(
    'POST',
    '/crm/v3/objects/calls/search',
    {
      filterGroups: [{ filters: [{ propertyName: 'hs_call_title', operator: 'EQ', value: title }] }],
      properties: ['hs_call_title'],
      limit: 10,
    },
  );
  return (reply.results ?? []).filter((call) => call.properties.hs_call_title === title).map((call) => call.id);
}

/** `POST /crm/v3/objects/calls` with the association to the contact in the same body. */
export async function createCall(client: HubSpotClient, record: CallRecord, contactId: string): Promise<string> {
  const created = await client.request<{ id: string }>('POST', '/crm/v3/objects/calls', {
    properties: callProperties(record),
    associations: [
      {
        to: { id: contactId },
        types: [{ associationCategory: 'HUBSPOT_DEFINED', associationTypeId: CALL_TO_CONTACT }],
      },
    ],
  });
  return created.id;
}

/**
 * `PATCH /crm/v3/objects/calls/{id}`: an edited call rewrites the engagement it already has. An edit may have
 * changed who the caller is (a corrected number or address), so the engagement is also put on that contact's
 * timeline with the v4 default association (`PUT /crm/v4/objects/calls/{id}/associations/default/contacts/{contactId}`,
 * https://developers.hubspot.com/docs/api/crm/associations, "Associate records without a label"), which changes
 * nothing when it is there already. The contacts it was on stay: callhook cannot tell its own association from
 * one a user added.
 */
export async function updateCall(
  client: HubSpotClient,
  record: CallRecord,
  callId: string,
  contactId: string,
): Promise<void> {
  const call = encodeURIComponent(callId);
  await client.request('PATCH', `/crm/v3/objects/calls/${call}`, { properties: callProperties(record) });
  await client.request(
    'PUT',
    `/crm/v4/objects/calls/${call}/associations/default/contacts/${encodeURIComponent(contactId)}`,
  );
}
