import type { CallRecord } from '../../record.js';
import { PermanentError } from '../errors.js';
import { type FoundContact, mostRecentlyUpdated } from '../shared/contact-choice.js';
import { phoneSpellings, samePhone } from '../shared/phone.js';
import { caller } from '../shared/record-fields.js';
import type { CompiledMap } from '../shared/template.js';
import type { ZohoClient } from './client.js';
import { type ActionReply, resultId } from './reply.js';

export type { FoundContact };

/**
 * The caller as a Zoho CRM contact or lead (docs/reference.md#crm-sinks): by email with an upsert, else by phone with a
 * search, then an update of the one found or a new one. Only the fields given are sent; Zoho leaves the others as
 * they were (https://www.zoho.com/crm/developer/docs/api/v6/update-records.html).
 */

export type Module = 'Contacts' | 'Leads';
export type Fields = Record<string, unknown>;

interface ZohoRecord {
  id: string;
  Phone?: string | null;
  Mobile?: string | null;
  Modified_Time?: string | null;
}

/** First name, last name, phone and email from the record, then `map` (Zoho's field API names) adding or replacing. */
export function contactFields(record: CallRecord, map: CompiledMap | undefined): Fields {
  const { firstName, lastName, phone, email } = caller(record);
  const fields: Fields = {};
  if (firstName) fields.First_Name = firstName;
  if (lastName) fields.Last_Name = lastName;
  if (phone) fields.Phone = phone;
  if (email) fields.Email = email;
  return { ...fields, ...map?.render(record) };
}

/**
 * `POST /crm/v6/<module>/upsert` (https://www.zoho.com/crm/developer/docs/api/v6/upsert-records.html): updates the
 * record with this Email or inserts one. `duplicate_check_fields` may name only system-defined duplicate check fields
 * and fields marked unique, so it is `Email` alone: Phone is neither in a Zoho org as it comes, and a phone is
 * matched by a search instead, which also finds it written another way.
 */
export async function upsertByEmail(
  client: ZohoClient,
  module: Module,
  email: string,
  fields: Fields,
): Promise<FoundContact> {
  const upsert = (data: Fields) =>
    client.request<ActionReply>('POST', `/crm/v6/${module}/upsert`, {
      body: { data: [data], duplicate_check_fields: ['Email'] },
    });
  const data = { ...fields, Email: fields.Email ?? email };
  try {
    return { id: resultId((await upsert(data)).body, `the ${singular(module)}`) };
  } catch (err) {
    // Last_Name is mandatory for a new contact or lead only: without one in the record, the upsert is tried as it
    // is (an update must not rename the person), and only when Zoho would insert is a name made up.
    if (!missingLastName(err)) throw err;
    return { id: resultId((await upsert(withLastName(data))).body, `the ${singular(module)}`) };
  }
}

/**
 * Zoho keeps a phone as it was typed, and its search matches a criterion's value whole
 * (https://www.zoho.com/crm/developer/docs/api/v6/search-records.html: `equals`, at most ten criteria, `(`, `)` and
 * `,` escaped with a backslash; 204 when nothing matches). So the likely spellings are asked for in Phone and
 * Mobile at once, what comes back is checked against the record's number, and of several the most recently
 * modified is taken.
 */
export async function findByPhone(
  client: ZohoClient,
  module: Module,
  phone: string,
): Promise<FoundContact | undefined> {
  const { spellings } = phoneSpellings(phone);
  const criteria = spellings.flatMap((spelling) =>
    ['Phone', 'Mobile'].map((field) => `(${field}:equals:${spelling.replace(/[\\(),]/g, '\\$&')})`),
  );
  const reply = await client.request<{ data?: ZohoRecord[] }>('GET', `/crm/v6/${module}/search`, {
    query: { criteria: `(${criteria.join('or')})` },
  });
  const matches = (reply.body?.data ?? []).filter(
    (r) => samePhone(r.Phone ?? undefined, phone) || samePhone(r.Mobile ?? undefined, phone),
  );
  return mostRecentlyUpdated(matches, (r) => r.Modified_Time, `Zoho CRM ${module} have ${phone}`);
}

/** `PUT /crm/v6/<module>` with the id, or `POST /crm/v6/<module>` for a caller Zoho does not know yet. */
export async function updateOrCreate(
  client: ZohoClient,
  module: Module,
  found: FoundContact | undefined,
  fields: Fields,
): Promise<FoundContact> {
  if (found) {
    resultId(
      (await client.request<ActionReply>('PUT', `/crm/v6/${module}`, { body: { data: [{ ...fields, id: found.id }] } }))
        .body,
      `the ${singular(module)}`,
    );
    return found;
  }
  return {
    id: resultId(
      (await client.request<ActionReply>('POST', `/crm/v6/${module}`, { body: { data: [withLastName(fields)] } })).body,
      `the ${singular(module)}`,
    ),
  };
}

/**
 * A new contact or lead needs a Last_Name (Zoho's one mandatory field of both). A caller who gave one name has it
 * as the last name, so Zoho shows "Asha", not "Asha Asha"; a caller who gave none is named by the number or address.
 */
function withLastName(fields: Fields): Fields {
  if (fields.Last_Name !== undefined && fields.Last_Name !== '') return fields;
  const { First_Name: first, ...rest } = fields;
  const name = first ?? fields.Phone ?? fields.Email;
  return name === undefined ? fields : { ...rest, Last_Name: name };
}

function missingLastName(err: unknown): boolean {
  return err instanceof PermanentError && /MANDATORY_NOT_FOUND\b.*\(Last_Name\)/.test(err.message);
}

function singular(module: Module): string {
  return module === 'Leads' ? 'lead' : 'contact';
}
