import type { CallRecord } from '../../record.js';
import { text, truncate } from '../shared/record-fields.js';
import type { GhlClient } from './client.js';

/**
 * The call as a note on the contact (docs/reference.md#crm-sinks; https://github.com/GoHighLevel/highlevel-api-docs
 * apps/contacts.json, "Notes": `GET`/`POST /contacts/{contactId}/notes`, `PUT /contacts/{contactId}/notes/{id}`,
 * body NotesDTO `{ body, userId? }`). Its first line holds the record id and revision, so a repeated delivery finds
 * it in the contact's notes and adds nothing, and an edited call (a higher revision) rewrites it.
 */

/** HighLevel documents no length for a note; a summary past this is cut so the contact's page stays readable. */
const SUMMARY_CHARS = 5_000;

interface Note {
  id: string;
  body?: string | null;
}

export type NoteOutcome = 'added' | 'updated' | 'unchanged';

/** `callhook <record id> (revision <n>)`: what the note is found by. */
export function noteHeading(record: Pick<CallRecord, 'id' | 'revision'>): string {
  return `callhook ${record.id} (revision ${record.revision})`;
}

/** Plain text, one fact a line (NotesDTO's `body` is a string; the documents say nothing of markup). */
export function noteBody(record: CallRecord): string {
  const value = (field: string) => text(record, field);
  const lines = [noteHeading(record), `Received: ${record.received_at} (hook ${record.hook})`];
  const add = (label: string, said: string | undefined) => {
    if (said !== undefined) lines.push(`${label}: ${said}`);
  };
  add('Outcome', value('call_outcome'));
  add('Sentiment', value('sentiment_analysis'));
  const seconds = Number(record.data.call_duration);
  if (record.data.call_duration !== undefined && Number.isFinite(seconds) && seconds >= 0)
    add('Duration', `${Math.round(seconds)} s`);
  const recording = value('recording_url');
  if (recording && URL.canParse(recording) && /^https?:$/.test(new URL(recording).protocol))
    add('Recording', recording);
  const summary = value('call_summary');
  if (summary) add('Summary', truncate(summary, SUMMARY_CHARS));
  return lines.join('\n');
}

/**
 * The note this record already has on the contact, with the revision it was written from: a body naming
 * `callhook <record id>`, wherever HighLevel kept the line (a note edited in its rich-text editor may wrap it).
 */
export function findNote(notes: readonly Note[], recordId: string): { id: string; revision: number } | undefined {
  const heading = new RegExp(`callhook ${escapeRegExp(recordId)}(?: \\(revision (\\d+)\\))?`);
  let best: { id: string; revision: number } | undefined;
  for (const note of notes) {
    const match = heading.exec(note.body ?? '');
    if (!match) continue;
    const revision = match[1] === undefined ? 1 : Number(match[1]);
    if (!best || revision > best.revision) best = { id: note.id, revision };
  }
  return best;
}

/**
 * Lists the contact's notes, then adds the call's note when none is there, rewrites it when the record is a higher
 * revision than the note was written from, and otherwise leaves it: a retry, a redeliver or a redelivery of an older
 * revision after an edit adds nothing.
 */
export async function attachNote(client: GhlClient, contactId: string, record: CallRecord): Promise<NoteOutcome> {
  const contact = encodeURIComponent(contactId);
  const listed = await client.request<{ notes?: Note[] }>('GET', `/contacts/${contact}/notes`);
  const existing = findNote(listed.notes ?? [], record.id);
  if (existing && existing.revision >= record.revision) return 'unchanged';
  const body = { body: noteBody(record) };
  if (existing) {
    await client.request('PUT', `/contacts/${contact}/notes/${encodeURIComponent(existing.id)}`, body);
    return 'updated';
  }
  await client.request('POST', `/contacts/${contact}/notes`, body);
  return 'added';
}

function escapeRegExp(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
