import type { CallRecord } from '../../record.js';
import { text, truncate } from '../shared/record-fields.js';
import type { ZohoClient } from './client.js';
import type { Module } from './contact.js';
import { type ActionReply, resultId } from './reply.js';

/**
 * The call as a note on the contact or lead (docs/reference.md#crm-sinks;
 * https://www.zoho.com/crm/developer/docs/api/v6/create-notes.html). Its title holds the record id, so a repeated
 * delivery finds it among the record's notes and adds nothing; its last line says which revision it holds, so an edited
 * call (a higher revision) rewrites it and an older one never does.
 */

/** Zoho does not document Note_Content's length; a note past this is no longer read by anyone. */
const CONTENT_CHARS = 10_000;
/**
 * Notes read per page of a record's notes, Zoho's largest
 * (https://www.zoho.com/crm/developer/docs/api/v6/get-related-records.html).
 */
const PER_PAGE = 200;
/**
 * Pages of notes looked through: a caller with more than 2,000 notes on one record is not a case worth more requests.
 */
const MAX_PAGES = 10;

export interface FoundNote {
  id: string;
  /** The revision the note holds, from its last line (1 for a note without one). */
  revision: number;
}

interface NoteRow {
  id: string;
  Note_Title?: string | null;
  Note_Content?: string | null;
}

export function noteTitle(record: CallRecord): string {
  return `callhook ${record.id}`;
}

/** Plain text: outcome, sentiment, summary and recording as lines, then the record and its revision. */
export function noteContent(record: CallRecord): string {
  const lines = [
    ['Outcome', text(record, 'call_outcome')],
    ['Sentiment', text(record, 'sentiment_analysis')],
    ['Summary', text(record, 'call_summary')],
    ['Recording', text(record, 'recording_url')],
  ]
    .filter((line): line is [string, string] => line[1] !== undefined)
    .map(([label, said]) => `${label}: ${said}`);
  const footer = `callhook record ${record.id}, revision ${record.revision}`;
  // The footer is what a later delivery reads the revision from: the caller's words are cut, never it.
  return `${truncate(lines.join('\n'), CONTENT_CHARS - footer.length - 2)}\n\n${footer}`.trimStart();
}

/**
 * The note already made for this record: `GET /crm/v6/<module>/<id>/Notes` with `fields` (which the related-records
 * API requires since v4), page by page; 204 when the record has no notes.
 */
export async function findNote(
  client: ZohoClient,
  module: Module,
  parentId: string,
  record: CallRecord,
): Promise<FoundNote | undefined> {
  const title = noteTitle(record);
  for (let page = 1; page <= MAX_PAGES; page++) {
    const reply = await client.request<{ data?: NoteRow[]; info?: { more_records?: boolean } }>(
      'GET',
      `/crm/v6/${module}/${encodeURIComponent(parentId)}/Notes`,
      {
        query: { fields: 'Note_Title,Note_Content', per_page: String(PER_PAGE), page: String(page) },
      },
    );
    const found = reply.body?.data?.find((note) => note.Note_Title === title);
    if (found) return { id: found.id, revision: revisionOf(found.Note_Content) };
    if (!reply.body?.info?.more_records) return undefined;
  }
  return undefined;
}

/** `POST /crm/v6/Notes` with `Parent_Id` naming the record and its module (the v6 shape, an object since v4). */
export async function createNote(
  client: ZohoClient,
  module: Module,
  parentId: string,
  record: CallRecord,
): Promise<string> {
  const note = {
    Note_Title: noteTitle(record),
    Note_Content: noteContent(record),
    Parent_Id: { module: { api_name: module }, id: parentId },
  };
  return resultId(
    (await client.request<ActionReply>('POST', '/crm/v6/Notes', { body: { data: [note] } })).body,
    'the note',
  );
}

/**
 * `PUT /crm/v6/Notes/<id>` (https://www.zoho.com/crm/developer/docs/api/v6/update-notes.html): title and content, its
 * only writable fields.
 */
export async function updateNote(client: ZohoClient, noteId: string, record: CallRecord): Promise<void> {
  const note = { Note_Title: noteTitle(record), Note_Content: noteContent(record) };
  resultId(
    (
      await client.request<ActionReply>('PUT', `/crm/v6/Notes/${encodeURIComponent(noteId)}`, {
        body: { data: [note] },
      })
    ).body,
    'the note',
  );
}

function revisionOf(content: string | null | undefined): number {
  const match = /revision (\d+)\s*$/.exec(content ?? '');
  return match ? Number(match[1]) : 1;
}
