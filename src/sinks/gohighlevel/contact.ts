import type { CallRecord } from '../../record.js';
import { PermanentError } from '../errors.js';
import { type FoundContact, mostRecentlyUpdated } from '../shared/contact-choice.js';
import { phoneSpellings, samePhone } from '../shared/phone.js';
import { type Caller, caller } from '../shared/record-fields.js';
import type { CompiledMap } from '../shared/template.js';
import type { GhlClient } from './client.js';

/**
 * The caller as a HighLevel contact (docs/reference.md#crm-sinks). The upsert follows the location's "Allow Duplicate
 * Contact" setting (https://github.com/GoHighLevel/highlevel-api-docs apps/contacts.json, "Upsert Contact"): with
 * duplicates allowed it may create a contact every time, and which field it matches on is the location's choice. So
 * the contact is searched for first, by the record's email, else by its phone, and updated by id when found; the
 * upsert is left for a caller the search does not know, where the location's own rule still catches a contact the
 * search index has not caught up with ("updates may take a few seconds to appear in the search results"), and for the
 * fields the update does not take.
 */

/**
 * UpdateContactDto's properties (apps/contacts.json, `PUT /contacts/{contactId}`): UpsertContactDto's but
 * `locationId`, `gender`, `companyName` and `createNewIfDuplicateAllowed`. HighLevel's validation answers any other
 * with 422 `property X should not exist`, so a found contact gets the rest through the upsert.
 */
const UPDATE_TAKES: ReadonlySet<string> = new Set([
  'firstName',
  'lastName',
  'name',
  'email',
  'phone',
  'address1',
  'city',
  'state',
  'postalCode',
  'website',
  'timezone',
  'dnd',
  'dndSettings',
  'inboundDndSettings',
  'tags',
  'customFields',
  'source',
  'dateOfBirth',
  'country',
  'assignedTo',
]);

/** The contact the search chose, with the email and phone HighLevel has for it and how many contacts matched. */
export interface GhlFoundContact extends FoundContact {
  email?: string;
  phone?: string;
  matched: number;
}

/** The contact written, and what the attempt should say of it. */
export interface ContactWritten {
  id: string;
  note?: string;
}

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
): Promise<GhlFoundContact | undefined> {
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
  const chosen = mostRecentlyUpdated(
    matches,
    (c) => c.dateUpdated,
    `GoHighLevel contacts have the ${by} ${who.email ?? who.phone}`,
  );
  if (!chosen) return undefined;
  const { email, phone } = matches.find((c) => c.id === chosen.id)!;
  return {
    ...chosen,
    ...dropUndefined({ email: email || undefined, phone: phone || undefined }),
    matched: matches.length,
  };
}

/**
 * `PUT /contacts/{contactId}` for a contact found, with only the fields given that UpdateContactDto takes (it has no
 * `locationId`), then the others through `updateFound`'s upsert; `POST /contacts/upsert` with the location for one
 * not found. Either way the contact's id, and what the attempt should say of the fields.
 */
export async function updateOrUpsert(
  client: GhlClient,
  locationId: string,
  found: GhlFoundContact | undefined,
  fields: ContactFields,
): Promise<ContactWritten> {
  if (found) return updateFound(client, locationId, found, fields);
  const reply = await upsert(client, { ...fields, locationId });
  const id = reply.contact?.id;
  if (typeof id !== 'string' || id === '')
    throw new PermanentError('GoHighLevel answered the upsert without a contact id');
  return { id };
}

/**
 * The update takes most fields; `companyName` and `gender` only the upsert does, which finds its contact by the
 * location's deduplication preferences rather than by id. So the upsert carries the contact's own email and phone as
 * the update left them (whichever field the location matches on, or both, it finds this contact), the fields the
 * update did not take and nothing else (so it clears nothing the update wrote), and `createNewIfDuplicateAllowed:
 * false`, which makes it update the duplicate it finds even where the location allows duplicates. When several
 * contacts have the caller's email or phone, the upsert would choose among them by the location's rule, not ours:
 * those fields are left out. The attempt's note says so, as it does when the location matched another contact.
 */
async function updateFound(
  client: GhlClient,
  locationId: string,
  found: GhlFoundContact,
  fields: ContactFields,
): Promise<ContactWritten> {
  const update: ContactFields = {};
  const rest: ContactFields = {};
  for (const [field, value] of Object.entries(fields)) (UPDATE_TAKES.has(field) ? update : rest)[field] = value;
  await client.request('PUT', `/contacts/${encodeURIComponent(found.id)}`, update);
  const left = Object.keys(rest);
  if (left.length === 0) return { id: found.id };
  const named = left.join(', ');
  if (found.matched > 1) {
    const them = left.length === 1 ? 'it' : 'them';
    return {
      id: found.id,
      note: `${named} left out: HighLevel's update does not take ${them}, and its upsert would choose among those contacts by the location's duplicate rule`,
    };
  }
  const reply = await upsert(client, {
    locationId,
    ...dropUndefined({ email: fields.email ?? found.email, phone: fields.phone ?? found.phone }),
    createNewIfDuplicateAllowed: false,
    ...rest,
  });
  const wrote = reply.contact?.id;
  if (wrote === found.id) return { id: found.id };
  const where =
    typeof wrote === 'string' && wrote !== ''
      ? `${reply.new ? 'a new contact' : 'contact'} ${wrote}`
      : 'a contact it did not name';
  return {
    id: found.id,
    note: `the upsert wrote ${named} to ${where}, which the location's duplicate rule matched, not to ${found.id}`,
  };
}

function upsert(client: GhlClient, body: ContactFields) {
  return client.request<{ new?: boolean; contact?: { id?: string } }>('POST', '/contacts/upsert', body);
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
