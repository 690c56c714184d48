import type { CallRecord } from '../../record.js';
import { type FoundContact, mostRecentlyUpdated } from '../shared/contact-choice.js';
import { phoneSpellings, samePhone } from '../shared/phone.js';
import { type Caller, caller } from '../shared/record-fields.js';
import type { CompiledMap } from '../shared/template.js';
import { PermanentError } from '../sink.js';
import type { GhlClient } from './client.js';

export type { FoundContact };

/**
 * The caller as a HighLevel contact (contract section 10). The upsert follows the location's "Allow Duplicate
 * Contact" setting (https://github.com/GoHighLevel/highlevel-api-docs apps/contacts.json, "Upsert Contact"): with
 * duplicates allowed it creates a contact every time, and which field it matches on is the location's choice. So the
 * contact is searched for first, by the record's email, else by its phone, and updated by id when found; the upsert
 * is left for a caller the search does not know, where the location's own rule still catches a contact the search
 * index has not caught up with ("updates may take a few seconds to appear in the search results").
 */

/** `map` targets under `customFields.` name a custom field by its key (`customFields.contact.budget`). */
export const CUSTOM_FIELD_PREFIX = 'customFields.';

export type ContactFields = Record<string, unknown>;

interface SearchedContact {
  id: string;
  email?: string | null;
  phone?: string | null;
  dateUpdated?: string | null;
}

/**
 * The fields written: first and last name, email and phone from the record, then `map`, which adds or replaces fields
 * by HighLevel's own names. A custom field goes in `customFields` as `{ key, field_value }` ("Pass either `id` or
 * `key` of custom field"); a field the record lacks is left out, so HighLevel keeps what the contact had.
 */
export function contactFields(record: CallRecord, map: CompiledMap | undefined): ContactFields {
  const { firstName, lastName, email, phone } = caller(record);
  const fields: ContactFields = dropUndefined({ firstName, lastName, email, phone });
  const custom: { key: string; field_value: unknown }[] = [];
  for (const [target, value] of Object.entries(map?.render(record) ?? {})) {
    if (target.startsWith(CUSTOM_FIELD_PREFIX))
      custom.push({ key: target.slice(CUSTOM_FIELD_PREFIX.length), field_value: value });
    else fields[target] = value;
  }
  if (custom.length > 0) fields.customFields = custom;
  return fields;
}

/**
 * `POST /contacts/search` (https://doc.clickup.com/8631005/d/h/87cpx-158396/6e629989abe7fad, the search guide the
 * OpenAPI document links to) by `email`, else by `phone`, most recently updated first. The guide asks for a phone with
 * its country code (`+91701000000`) and HighLevel's replies show phones in E.164, so that spelling is the one that
 * matters; the other spellings of the number (`098123 45678`, `9812345678`), in the same OR group, find a contact
 * whose number was kept as someone typed it, which the documents do not rule out.
 * What comes back is checked against the record, and of several the most recently updated (`dateUpdated`) is taken.
 */
export async function findContact(
  client: GhlClient,
  locationId: string,
  who: Pick<Caller, 'email' | 'phone'>,
): Promise<FoundContact | undefined> {
  const by = who.email ? 'email' : 'phone';
  const filter = who.email
    ? { field: 'email', operator: 'eq', value: who.email }
    : {
        group: 'OR',
        filters: phoneSpellings(who.phone!).spellings.map((value) => ({ field: 'phone', operator: 'eq', value })),
      };
  const reply = await client.request<{ contacts?: SearchedContact[]; total?: number }>('POST', '/contacts/search', {
    locationId,
    page: 1,
    pageLimit: 20,
    filters: [filter],
    sort: [{ field: 'dateUpdated', direction: 'desc' }],
  });
  const matches = (reply.contacts ?? []).filter((c) =>
    who.email ? c.email?.trim().toLowerCase() === who.email.toLowerCase() : samePhone(c.phone ?? undefined, who.phone!),
  );
  return mostRecentlyUpdated(
    matches,
    (c) => c.dateUpdated,
    `GoHighLevel contacts have the ${by} ${who.email ?? who.phone}`,
  );
}

/**
 * `PUT /contacts/{contactId}` for a contact found, with only the fields given (its body, UpdateContactDto, has no
 * `locationId`); `POST /contacts/upsert` with the location for one not found. Either way the contact's id.
 */
export async function updateOrUpsert(
  client: GhlClient,
  locationId: string,
  found: FoundContact | undefined,
  fields: ContactFields,
): Promise<string> {
  if (found) {
    await client.request('PUT', `/contacts/${encodeURIComponent(found.id)}`, fields);
    return found.id;
  }
  const reply = await client.request<{ new?: boolean; contact?: { id?: string } }>('POST', '/contacts/upsert', {
    ...fields,
    locationId,
  });
  const id = reply.contact?.id;
  if (typeof id !== 'string' || id === '')
    throw new PermanentError('GoHighLevel answered the upsert without a contact id');
  return id;
}

/**
 * `POST /contacts/{contactId}/tags` adds to the contact's tags; the upsert's and the update's own `tags` would
 * replace them ("This field will overwrite all current tags associated with the contact"). Adding a tag the contact
 * has changes nothing, so a repeated delivery may add them again.
 */
export async function addTags(client: GhlClient, contactId: string, tags: readonly string[]): Promise<void> {
  await client.request('POST', `/contacts/${encodeURIComponent(contactId)}/tags`, { tags });
}

function dropUndefined(fields: Record<string, unknown>): ContactFields {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}
