import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { z } from 'zod';
import { CallingServiceError, createClient, type TagContactRequest } from '../../client/index.js';
import type { CallRecord } from '../../record.js';
import { errorForStatus, PermanentError } from '../errors.js';
import { parseRetryAfter } from '../shared/http-response.js';
import { samePhone } from '../shared/phone.js';
import { text as fieldText, truncate } from '../shared/record-fields.js';
import { defineSinkType } from '../sink.js';

/** The service documents no length limit (spec 2.6); a note longer than this is no longer read by anyone. */
const DESCRIPTION_CHARS = 500;

const text = z.string().min(1);

/**
 * Adds the caller of each call to a tag (a contact list) of the calling service, spec endpoint 12, with the
 * fields of spec 2.6 filled from the record: for example every "callback requested" call into the list the
 * next campaign dials. Delivery is at least once, so the tag's contacts are read first (endpoint 14) and a
 * caller already in it is not added again.
 */
export const tagContactSink = defineSinkType({
  type: 'tag-contact',
  defaults: { concurrency: 1 },
  secretOptions: ['api_key'],
  options: z.strictObject({
    api_url: z
      .url({
        protocol: /^https?$/,
        error: 'api_url must be the http(s) base URL of the calling service, ending in /api/v1',
      })
      .refine(
        (url) => !URL.canParse(url) || new URL(url).pathname.replace(/\/+$/, '').endsWith('/api/v1'),
        'api_url must end in /api/v1 (spec section 9)',
      ),
    api_key: text,
    tag_id: text,
    job_title: text.optional(),
    lifecycle_stage: text.optional(),
    lead_status: text.optional(),
  }),
  open({ api_url, api_key, tag_id, job_title, lifecycle_stage, lead_status }) {
    // No retries in the client: the delivery worker retries on its own schedule, with backoff and a dead letter.
    const client = createClient({ baseUrl: api_url, apiKey: api_key, retries: 0 });
    return {
      async deliver(record, { signal, log }) {
        const contact = { ...tagContact(record), job_title, lifecycle_stage, lead_status };
        try {
          const existing = await client.listTagContacts(tag_id, { signal });
          if (existing.some((c) => samePhone(c.phone, contact.phone))) {
            log.debug({ call: record.id }, 'the caller is already in the tag');
            return;
          }
          await client.createTagContact(tag_id, contact, { signal });
        } catch (err) {
          throw forWorker(err);
        }
      },
    };
  },
});

/** The tag contact of spec 2.6 for this call's caller; a call without a number has no one to add. */
export function tagContact(record: CallRecord): TagContactRequest & { phone: string } {
  const value = (field: string) => fieldText(record, field);
  const given = value('phone_number');
  if (!given) throw new PermanentError('the record has no phone_number to add to the tag');
  // Normalised records hold E.164 already; a value that was not (no region to read it in) is sent as it came.
  const parsed = parsePhoneNumberFromString(given);
  const phone = parsed?.isValid() ? parsed.number : given;
  const note = [value('call_outcome'), value('call_summary')].filter(Boolean).join(' — ');
  return {
    first_name: value('first_name'),
    last_name: value('last_name'),
    phone,
    email: value('email_address'),
    description: note ? truncate(note, DESCRIPTION_CHARS) : undefined,
  };
}

/**
 * As the http sink maps statuses (docs/reference.md#sinks-and-delivery): a 4xx that is not retryable will fail again;
 * the rest, a lost reply and one not in the documented shape are retried, when the service's Retry-After says if it
 * says.
 */
function forWorker(err: unknown): unknown {
  if (!(err instanceof CallingServiceError)) return err;
  const { status, statusLine } = err;
  return errorForStatus(status || undefined, statusLine, { retryAfterMs: parseRetryAfter(err.retryAfter), cause: err });
}

/** The registry loads a type by its folder's name and takes its default export (registry.ts). */
export default tagContactSink;
