import type { CallRecord } from '../../record.js';

/**
 * What sinks read of a record, in one place (every sink that writes fields of its own, the CRMs, Slack, the calling
 * service's tags): a declared field's text, the caller as a person, and text cut to a length a service accepts.
 */

/** A declared field as text, trimmed; undefined when the call did not have it (the AI's `""` was normalised away). */
export function text(record: CallRecord, field: string): string | undefined {
  const value = record.data[field];
  if (value === undefined) return undefined;
  const trimmed = String(value).trim();
  return trimmed === '' ? undefined : trimmed;
}

export interface Caller {
  firstName: string | undefined;
  lastName: string | undefined;
  /** First and last name together, when either is there. */
  name: string | undefined;
  /** E.164 when the call's number passed its format check (docs/reference.md#normalising). */
  phone: string | undefined;
  email: string | undefined;
}

/** The caller of a call, from the spec's recommended parameters (section 6.4). */
export function caller(record: CallRecord): Caller {
  const firstName = text(record, 'first_name');
  const lastName = text(record, 'last_name');
  return {
    firstName,
    lastName,
    name: [firstName, lastName].filter(Boolean).join(' ') || undefined,
    phone: text(record, 'phone_number'),
    email: text(record, 'email_address'),
  };
}

/**
 * Cut to `max` UTF-16 units with an ellipsis, never inside a surrogate pair: half an emoji is not valid UTF-8 on
 * the wire, and services count characters, never more.
 */
export function truncate(value: string, max: number): string {
  if (value.length <= max) return value;
  return `${value.slice(0, max - 1).replace(/[\uD800-\uDBFF]$/, '')}…`;
}
