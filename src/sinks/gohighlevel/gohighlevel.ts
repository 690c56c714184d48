import { z } from 'zod';
import { PermanentError } from '../errors.js';
import { caller } from '../shared/record-fields.js';
import { serviceUrl } from '../shared/service-url.js';
import { mapSchema } from '../shared/template.js';
import { defineSinkType } from '../sink.js';
import { ghlClient } from './client.js';
import { addTags, CUSTOM_FIELD_PREFIX, contactFields, findContact, updateOrUpsert } from './contact.js';
import { attachNote } from './note.js';

/**
 * GoHighLevel (HighLevel, LeadConnector) as a sink (docs/reference.md#crm-sinks): the caller becomes or updates a
 * contact of the sub-account (`location_id`), the given `tags` are added to it, and the call is a note on it holding
 * the record id. API 2.0 only: API 1.0 has reached its end of support.
 */

const text = (option: string) =>
  z
    .string({ error: `${option} is required` })
    .trim()
    .min(1, { error: `${option} must not be empty` });

/** Targets `map` may not name: the sink sets them itself, or HighLevel would replace the contact's tags with them. */
const RESERVED_TARGETS: Readonly<Record<string, string>> = {
  locationId: 'locationId is the location_id option',
  tags: "tags would replace the contact's tags; use the tags option, which adds them",
  customFields: `name one custom field by its key: ${CUSTOM_FIELD_PREFIX}<key>`,
};

const contactMap = mapSchema.superRefine((map, ctx) => {
  for (const target of map.targets) {
    const reserved = Object.hasOwn(RESERVED_TARGETS, target) ? RESERVED_TARGETS[target] : undefined;
    if (reserved) ctx.addIssue({ code: 'custom', path: [target], message: reserved });
    else if (target === CUSTOM_FIELD_PREFIX)
      ctx.addIssue({
        code: 'custom',
        path: [target],
        message: `name a custom field by its key: ${CUSTOM_FIELD_PREFIX}<key>`,
      });
  }
});

export const gohighlevelSink = defineSinkType({
  type: 'gohighlevel',
  /**
   * A delivery makes at most five requests (search, update or upsert, tags, the notes list, the note), six when `map`
   * names a field only the upsert takes and the caller is known (update and upsert), and HighLevel allows 100 requests
   * per 10 seconds per app and location (https://marketplace.gohighlevel.com/docs/oauth/Faqs, "What are current rate
   * limits for API 2.0?"): 15 deliveries started per 10 s is 75 to 90 requests, which leaves room for the requests of
   * deliveries started in the window before and still running.
   */
  defaults: { rate: { max: 15, per: '10s' } },
  secretOptions: ['token'],
  options: z.strictObject({
    token: text('token'),
    location_id: text('location_id'),
    api_url: serviceUrl('api_url', 'api_url must be the https:// base URL of the HighLevel API').default(
      'https://services.leadconnectorhq.com',
    ),
    tags: z.array(text('each tag')).optional(),
    map: contactMap.optional(),
  }),
  open({ token, location_id: locationId, api_url: apiUrl, tags, map }) {
    return {
      async deliver(record, { signal, log }) {
        const who = caller(record);
        if (!who.email && !who.phone) {
          throw new PermanentError(
            'the record has neither an email_address nor a valid phone_number: there is no way to find the caller in GoHighLevel',
          );
        }
        const client = ghlClient({ apiUrl, token, signal });
        const found = await findContact(client, locationId, who);
        const written = await updateOrUpsert(client, locationId, found, contactFields(record, map));
        const contactId = written.id;
        if (tags && tags.length > 0) await addTags(client, contactId, tags);
        const note = await attachNote(client, contactId, record);
        log.debug(
          { call: record.id, contact: contactId, found: found !== undefined, note },
          'delivered to GoHighLevel',
        );
        const said = [found?.note, written.note].filter((part) => part !== undefined);
        return said.length > 0 ? { note: said.join('; ') } : undefined;
      },
    };
  },
});

/** The registry loads a type by its folder's name and takes its default export (registry.ts). */
export default gohighlevelSink;
