import { z } from 'zod';
import { PermanentError } from '../errors.js';
import { maskFetchedTokens } from '../shared/fetched-tokens.js';
import { caller } from '../shared/record-fields.js';
import { serviceUrl } from '../shared/service-url.js';
import { mapSchema } from '../shared/template.js';
import { defineSinkType } from '../sink.js';
import { zohoClient } from './client.js';
import { contactFields, findByPhone, updateOrCreate, upsertByEmail } from './contact.js';
import { createNote, findNote, updateNote } from './note.js';
import { zohoTokens } from './token.js';

/**
 * Zoho CRM (docs/reference.md#crm-sinks): the caller as a contact (or a lead), found by email, else by phone, updated
 * or created; then the call as a note on it, holding the record id, so a repeated delivery adds nothing and an edited
 * call rewrites its note. The access token comes from the refresh-token grant and is shared by every delivery.
 */

const text = (option: string) =>
  z
    .string({ error: `${option} is required` })
    .trim()
    .min(1, { error: `${option} must not be empty` });

export const zohoCrmSink = defineSinkType({
  type: 'zoho-crm',
  defaults: {
    // Zoho CRM caps the API calls an app has open at once in an org by edition: Free 5, Standard 10, Professional 15,
    // Enterprise 20, Ultimate 25 (https://www.zoho.com/crm/developer/docs/api/v6/api-limits.html, "Concurrency
    // limit"). A delivery makes its calls one after another, so 4 deliveries at once stay under the smallest, with
    // room for the org's other integrations.
    concurrency: 4,
    // The same page counts API credits per rolling 24 hours: at least 50,000 on every paid edition (Free: 5,000).
    // A delivery spends 3 or 4 (the upsert, or the search and the write; the notes read; the note written), so 500
    // an hour is at most 48,000 a day. A Free org sets a lower `rate`; a 429 pauses the sink in any case.
    rate: { max: 500, per: '1h' },
  },
  secretOptions: ['client_secret', 'refresh_token'],
  options: z.strictObject({
    client_id: text('client_id'),
    client_secret: text('client_secret'),
    refresh_token: text('refresh_token'),
    module: z.enum(['Contacts', 'Leads'], { error: 'module must be Contacts or Leads' }).default('Contacts'),
    // India's data centre by default, where most of callhook's users are; each DC has its own pair of hosts
    // (https://www.zoho.com/crm/developer/docs/api/v6/multi-dc.html).
    token_url: serviceUrl('token_url').default('https://accounts.zoho.in/oauth/v2/token'),
    api_url: serviceUrl('api_url').default('https://www.zohoapis.in'),
    map: mapSchema.optional(),
  }),
  open({ client_id, client_secret, refresh_token, module, token_url, api_url, map }, context) {
    const tokens = zohoTokens({
      tokenUrl: token_url,
      clientId: client_id,
      clientSecret: client_secret,
      refreshToken: refresh_token,
      onToken: maskFetchedTokens(context.secret),
    });
    return {
      async deliver(record, { signal }) {
        const { email, phone } = caller(record);
        // No address and no number in E.164: nothing to find the caller by, nor to tell a new contact apart later.
        if (!email && !phone)
          throw new PermanentError(
            'the record has neither email_address nor a valid phone_number: no way to find or create the caller in Zoho CRM',
          );
        const client = zohoClient({ apiUrl: api_url, tokens, signal });
        const fields = contactFields(record, map);
        const contact = email
          ? await upsertByEmail(client, module, email, fields)
          : await updateOrCreate(client, module, await findByPhone(client, module, phone!), fields);
        const note = await findNote(client, module, contact.id, record);
        if (!note) await createNote(client, module, contact.id, record);
        else if (record.revision > note.revision) await updateNote(client, note.id, record);
        return contact.note ? { note: contact.note } : undefined;
      },
    };
  },
});

/** The registry loads a type by its folder's name and takes its default export (registry.ts). */
export default zohoCrmSink;
