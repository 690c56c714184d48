import { PermanentError } from '../errors.js';
import { type FoundContact as Found, mostRecentlyUpdated } from '../shared/contact-choice.js';
import { phoneSpellings, samePhone } from '../shared/phone.js';
import type { HubSpotClient } from './client.js';

/**
 * The caller as a HubSpot contact (docs/reference.md#crm-sinks): by email with one batch upsert, else by phone with a
 * search, then an update or a create. Only the properties given are written: HubSpot leaves the others as they
 * were (https://developers.hubspot.com/docs/api/crm/contacts, "Update contacts").
 */

export type Properties = Record<string, unknown>;

interface SimpleObject {
  id: string;
  properties: Record<string, string | null | undefined>;
  updatedAt?: string;
}

export interface FoundContact extends Found {
  /** Made by this delivery: HubSpot's search will not see it for a few seconds. */
  created?: boolean;
}

/**
 * `POST /crm/v3/objects/contacts/batch/upsert` with `idProperty: email`: creates the contact or updates the one with
 * that address (https://developers.hubspot.com/docs/api-reference/legacy/crm/objects/contacts/batch/upsert-contacts).
 */
export async function upsertByEmail(
  client: HubSpotClient,
  email: string,
  properties: Properties,
): Promise<FoundContact> {
  const reply = await client.request<{ results?: SimpleObject[]; errors?: { message?: string; category?: string }[] }>(
    'POST',
    '/crm/v3/objects/contacts/batch/upsert',
    {
      inputs: [{ id: email, idProperty: 'email', properties: { ...properties, email } }],
    },
  );
  const contact = reply.results?.[0];
  if (contact) return { id: contact.id };
  // A batch answers 207 with its errors and no result when the one input was refused (an unknown property).
  const error = reply.errors?.[0];
  throw new PermanentError(
    `HubSpot refused the contact: ${error ? `${error.category ?? ''} ${error.message ?? ''}`.trim() : 'no result'}`,
  );
}

/**
 * HubSpot keeps a phone as it was typed, and its search matches `phone` and `mobilephone` as whole values
 * (https://developers.hubspot.com/docs/api/crm/search: filter groups are ORed, at most five of them), so the likely
 * spellings are asked for with `IN`. HubSpot also keeps each number's digits in the calculated, read-only
 * `hs_searchable_calculated_phone_number` / `hs_searchable_calculated_mobile_number` (the number without its country
 * code whatever the punctuation, `98123-45678` as `9812345678`, as HubSpot's accounts show it; the API reference does
 * not describe them): a spelling none of the others guessed is found by those. What comes back is checked against the
 * record's number, and of several the most recently modified is taken (docs/reference.md#crm-sinks).
 */
export async function findByPhone(client: HubSpotClient, phone: string): Promise<FoundContact | undefined> {
  const { national, spellings } = phoneSpellings(phone);
  const filterGroups: unknown[] = [
    { filters: [{ propertyName: 'phone', operator: 'IN', values: spellings }] },
    { filters: [{ propertyName: 'mobilephone', operator: 'IN', values: spellings }] },
  ];
  if (national) {
    filterGroups.push(
      { filters: [{ propertyName: 'hs_searchable_calculated_phone_number', operator: 'EQ', value: national }] },
      { filters: [{ propertyName: 'hs_searchable_calculated_mobile_number', operator: 'EQ', value: national }] },
    );
  }
  const reply = await client.request<{ total?: number; results?: SimpleObject[] }>(
    'POST',
    '/crm/v3/objects/contacts/search',
    {
      filterGroups,
      properties: [
        'phone',
        'mobilephone',
        'hs_searchable_calculated_phone_number',
        'hs_searchable_calculated_mobile_number',
        'lastmodifieddate',
      ],
      sorts: [{ propertyName: 'lastmodifieddate', direction: 'DESCENDING' }],
      limit: 20,
    },
  );
  const matches = (reply.results ?? []).filter((c) => matchesPhone(c, phone, national));
  return mostRecentlyUpdated(
    matches,
    (c) => c.properties.lastmodifieddate ?? c.updatedAt,
    `HubSpot contacts have ${phone}`,
  );
}

/** `PATCH /crm/v3/objects/contacts/{id}` or `POST /crm/v3/objects/contacts` with the caller's properties. */
export async function updateOrCreate(
  client: HubSpotClient,
  found: FoundContact | undefined,
  properties: Properties,
): Promise<FoundContact> {
  if (found) {
    await client.request('PATCH', `/crm/v3/objects/contacts/${encodeURIComponent(found.id)}`, { properties });
    return found;
  }
  const created = await client.request<SimpleObject>('POST', '/crm/v3/objects/contacts', { properties });
  return { id: created.id, created: true };
}

function matchesPhone(contact: SimpleObject, phone: string, national: string | undefined): boolean {
  const p = contact.properties;
  if (samePhone(p.phone ?? undefined, phone) || samePhone(p.mobilephone ?? undefined, phone)) return true;
  return (
    national !== undefined &&
    (p.hs_searchable_calculated_phone_number === national || p.hs_searchable_calculated_mobile_number === national)
  );
}
