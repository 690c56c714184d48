import { z } from 'zod';
import type { CallRecord } from '../../record.js';
import { PermanentError } from '../errors.js';
import { caller } from '../shared/record-fields.js';
import { serviceUrl } from '../shared/service-url.js';
import { type CompiledMap, mapSchema } from '../shared/template.js';
import { defineSinkType } from '../sink.js';
import { createCall, findCalls, updateCall } from './call.js';
import { type HubSpotClient, hubspotClient } from './client.js';
import { type FoundContact, findByPhone, type Properties, updateOrCreate, upsertByEmail } from './contact.js';
import { type Recent, recentIds } from './recent.js';

/**
 * The caller as a HubSpot contact and the call as a call engagement on its timeline (docs/reference.md#crm-sinks).
 * A delivery makes three requests when the record has an email (upsert, call search, call create), four without
 * (contact search, contact update or create, call search, call create), two of them searches; an edited call one
 * more (the call's update and its association).
 */
export const hubspotSink = defineSinkType({
  type: 'hubspot',
  defaults: {
    // A private app may make 100 requests per 10 seconds on Free and Starter accounts, 190 on Professional and
    // Enterprise (https://developers.hubspot.com/docs/apps/legacy-apps/private-apps/overview, "Rate limits"), and the
    // search endpoints have their own, lower limit per second (https://developers.hubspot.com/docs/api/crm/search,
    // "Limitations": 5 a second today, 4 before). Three deliveries every two seconds make at most three searches in
    // one second and 60 requests in ten seconds (75 were every one an edit without an email, its five requests the
    // most a delivery makes): within both on every tier, with room for the app's other requests.
    rate: { max: 3, per: '2s' },
    concurrency: 2,
  },
  secretOptions: ['token'],
  options: z.strictObject({
    token: z
      .string({ error: 'token is required: the access token of a HubSpot private app' })
      .min(1, { error: 'token must not be empty' }),
    api_url: serviceUrl('api_url', 'api_url must be the https:// base URL of the HubSpot API').default(
      'https://api.hubapi.com',
    ),
    /** Contact properties by HubSpot's internal names → templates, added to or replacing the defaults. */
    map: mapSchema.optional(),
  }),
  open({ token, api_url: apiUrl, map }) {
    // Both outlive one delivery: a repeat delivered within HubSpot's search lag finds what this process made
    // (recent.ts).
    const recentCalls = recentIds();
    const recentContacts = recentIds();
    return {
      async deliver(record, { signal, log }) {
        const properties = contactProperties(record, map);
        const client = hubspotClient({ apiUrl, token, signal });
        const contact = await writeContact(client, properties, recentContacts);
        const said = await attachCall(client, record, contact.id, recentCalls);
        log.debug({ call: record.id, contact: contact.id }, 'delivered to HubSpot');
        const note = [contact.note, said].filter(Boolean).join('; ');
        return note ? { note } : undefined;
      },
    };
  },
});

/**
 * The contact's properties: first name, last name, phone and email from the record, then `map` adding or replacing
 * (HubSpot's internal property names, https://developers.hubspot.com/docs/api/crm/contacts). A field the call did
 * not have is left out, so HubSpot keeps what the contact had.
 */
export function contactProperties(record: CallRecord, map: CompiledMap | undefined): Properties {
  const { firstName, lastName, phone, email } = caller(record);
  const defaults = { firstname: firstName, lastname: lastName, phone, email };
  const properties: Properties = {};
  for (const [name, value] of Object.entries({ ...defaults, ...map?.render(record) })) {
    if (value === undefined || value === null) continue;
    // HubSpot's property values are text or numbers; a list or an object is written as its JSON.
    properties[name] = typeof value === 'object' ? JSON.stringify(value) : value;
  }
  return properties;
}

/**
 * By email when there is one (one upsert, which HubSpot makes at once, no search involved), else by phone. The
 * `email` and `phone` written are the ones looked up by, so a `map` that takes them from other fields of the call
 * finds the caller by those.
 */
async function writeContact(client: HubSpotClient, properties: Properties, recent: Recent): Promise<FoundContact> {
  const email =
    typeof properties.email === 'string' && properties.email.trim() !== '' ? properties.email.trim() : undefined;
  if (email) return upsertByEmail(client, email, properties);
  const phone = properties.phone === undefined ? '' : String(properties.phone).trim();
  if (phone === '') {
    throw new PermanentError(
      'the call has neither an email address nor a phone number to find or create the HubSpot contact by (email_address, phone_number, or `email` / `phone` in map)',
    );
  }
  const found = (await findByPhone(client, phone)) ?? known(recent.get(phone));
  const contact = await updateOrCreate(client, found, properties);
  if (contact.created) recent.set(phone, contact.id);
  return contact;
}

/**
 * The call engagement holding the record id: made once, looked for first, so a repeated delivery adds nothing; an
 * edited call (revision 2 and later) rewrites the engagement it finds. What an operator should know comes back as
 * words for the attempt's note.
 */
async function attachCall(
  client: HubSpotClient,
  record: CallRecord,
  contactId: string,
  recent: Recent,
): Promise<string | undefined> {
  const found = await findCalls(client, record);
  const remembered = recent.get(record.id);
  const calls = found.length === 0 && remembered !== undefined ? [remembered] : found;
  if (calls.length === 0) {
    recent.set(record.id, await createCall(client, record, contactId));
    return undefined;
  }
  const [call] = calls as [string, ...string[]];
  if (record.revision > 1) await updateCall(client, record, call, contactId);
  if (calls.length === 1) return undefined;
  const did = record.revision > 1 ? `updated ${call}` : 'added none';
  return `${calls.length} HubSpot call engagements hold this call (${calls.join(', ')}); ${did}`;
}

function known(id: string | undefined): FoundContact | undefined {
  return id === undefined ? undefined : { id };
}

/** The registry loads a type by its folder's name and takes its default export (registry.ts). */
export default hubspotSink;
