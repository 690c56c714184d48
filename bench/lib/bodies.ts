import { randomBytes } from 'node:crypto';

/**
 * One end-of-call webhook as the sender posts it (spec section 6.4, the recommended fields), in the three
 * encodings callhook accepts. Every value is a string because that is what a form field is, and JSON is sent
 * alike so the three encodings carry the same fields.
 */

export type Encoding = 'json' | 'form' | 'multipart';

/** The body is padded to about this size: a realistic summary, and the figure the issue asks about. */
const TARGET_JSON_BYTES = 1024;
const BOUNDARY = '----callhookbench7MA4YWxkTrZu0gW';

const FIELDS: Readonly<Record<string, string>> = {
  first_name: 'Asha',
  last_name: 'Verma',
  phone_number: '+91 98123 45678',
  email_address: 'asha.verma@example.com',
  order_id: 'ORD-48213',
  call_date: '2026-11-21',
  call_duration: '184',
  call_cost: '12.50',
  product_name: 'Electric Kettle 1.5 L',
  quantity: '2',
  order_value: '2498',
  address: '14, 2nd Cross, Indiranagar, Bengaluru, Karnataka',
  pincode: '560038',
  sentiment_analysis: 'Positive',
  call_outcome: 'order placed',
  call_summary: '',
  recording_url: 'https://recordings.example.com/calls/2026/11/21/c-48213.mp3',
};

const SUMMARY =
  'The caller confirmed her delivery address and ordered two electric kettles, asked whether cash on delivery ' +
  'was possible, and agreed to pay online after hearing about the discount. She wants delivery before Friday. ';

/** The fields with `call_summary` padded so the JSON body, call_id included, is about 1 KB. */
function paddedFields(): Record<string, string> {
  const fields = { ...FIELDS, call_summary: SUMMARY };
  const size = Buffer.byteLength(jsonBody('bench-xxxxxxxx-0000000', fields));
  const missing = Math.max(0, TARGET_JSON_BYTES - size);
  fields.call_summary = `${SUMMARY.repeat(1 + Math.ceil(missing / SUMMARY.length))
    .slice(0, SUMMARY.length + missing)
    .trimEnd()}.`;
  return fields;
}

function jsonBody(callId: string, fields: Record<string, string>): string {
  return JSON.stringify({ call_id: callId, ...fields });
}

function formBody(callId: string, fields: Record<string, string>): string {
  return new URLSearchParams({ call_id: callId, ...fields }).toString();
}

/** Written by hand (a fixed boundary, CRLF line ends, RFC 7578) so every request is byte-identical but for call_id. */
function multipartBody(callId: string, fields: Record<string, string>): string {
  const parts = Object.entries({ call_id: callId, ...fields }).map(
    ([name, value]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
  );
  return `${parts.join('')}--${BOUNDARY}--\r\n`;
}

export const CONTENT_TYPES: Readonly<Record<Encoding, string>> = {
  json: 'application/json',
  form: 'application/x-www-form-urlencoded',
  multipart: `multipart/form-data; boundary=${BOUNDARY}`,
};

const ENCODERS: Readonly<Record<Encoding, (callId: string, fields: Record<string, string>) => string>> = {
  json: jsonBody,
  form: formBody,
  multipart: multipartBody,
};

export interface BodyFactory {
  contentType: string;
  /** Size of one body in bytes (they differ only in the counter's digits). */
  bytes: number;
  /** A new body with a call_id never sent before, so each request is an insert rather than a duplicate. */
  next(): string;
}

/**
 * The call_id carries a random run prefix and a counter: unique across runs too, in case a data dir is reused.
 * The body is split once around the id, so a request costs the bench one concatenation, not a re-encoding.
 */
export function bodyFactory(encoding: Encoding): BodyFactory {
  // Letters and digits only: no encoding changes it, so it is found as is in all three templates.
  const marker = 'CALLIDPLACEHOLDER';
  const template = ENCODERS[encoding](marker, paddedFields());
  const at = template.indexOf(marker);
  const head = template.slice(0, at);
  const tail = template.slice(at + marker.length);
  const prefix = `bench-${randomBytes(4).toString('hex')}-`;
  let counter = 0;
  const next = () => `${head}${prefix}${String(++counter).padStart(7, '0')}${tail}`;
  return { contentType: CONTENT_TYPES[encoding], bytes: Buffer.byteLength(`${head}${prefix}0000000${tail}`), next };
}

/** The call's fields as plain strings, for building records outside HTTP (the backlog). */
export function callFields(callId: string): Record<string, string> {
  return { call_id: callId, ...paddedFields() };
}
