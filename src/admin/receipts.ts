import { CallhookError } from '../errors.js';
import type { Hook, IntakeReply } from '../intake/pipeline.js';
import type { IngestRequest } from '../intake/request.js';
import type { AdminQueries, ListReceiptsQuery, ReceiptInfo } from '../store/admin-queries.js';

/**
 * Refused requests are recoverable (docs/reference.md#refused-requests). The sender never retries, so a request refused
 * with 400 or 415 is a lost call unless someone acts on it: its receipt keeps the raw body, and once the sender's
 * mistake is understood it is run through intake again, as it came or corrected, and stored with `source: recovered`.
 * Shared by the admin API, the dashboard and the CLI (which lists receipts from the store, and ingests through the
 * running serve: the hooks and sinks are its own).
 */

export interface ReceiptsDeps {
  store: AdminQueries;
  hooks: ReadonlyMap<string, Hook>;
  /**
   * The webhook route's own intake (intake/intake.ts), so a recovered call is normalised, deduplicated and routed
   * as any other, and wakes the delivery worker as any other once it is accepted.
   */
  ingest: IngestRequest;
  bodyLimitBytes: number;
}

export type ReceiptsQuery = Omit<ListReceiptsQuery, 'limit'> & { limit: number };

export interface ReceiptsPage {
  receipts: ReceiptInfo[];
  /** The cursor (`after`) of the next page, null on the last. */
  next: number | null;
}

/** A receipt's id as given in a path or on a command line; one that is no receipt's is a 404, not a bad request. */
export function receiptId(id: string | number): number {
  const n = Number(id);
  if (!Number.isSafeInteger(n) || n < 1) throw new CallhookError('NOT_FOUND', `no receipt with id ${id}`);
  return n;
}

/** Receipts by outcome (`rejected`: the refused requests), hook and time, a page at a time. */
export async function listReceipts(
  { store }: Pick<ReceiptsDeps, 'store'>,
  query: ReceiptsQuery,
): Promise<ReceiptsPage> {
  const receipts = await store.listReceiptPage(query);
  return { receipts, next: receipts.length === query.limit ? receipts.at(-1)!.id : null };
}

export async function showReceipt({ store }: Pick<ReceiptsDeps, 'store'>, id: string | number): Promise<ReceiptInfo> {
  const receipt = await store.getReceipt(receiptId(id));
  if (!receipt) throw new CallhookError('NOT_FOUND', `no receipt with id ${id}`);
  return receipt;
}

/** A receipt as the admin API shows it: the body as text where it is UTF-8, else in base64. */
export interface ReceiptJson extends Omit<ReceiptInfo, 'rawBody'> {
  rawBody?: string;
  rawBodyBase64?: string;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A body as JSON can carry it (docs/reference.md#refused-requests): its text where it is UTF-8, else its bytes in
 * base64. Both the admin API's replies and the CLI's ingest requests write bodies so.
 */
export function textOrBase64(bytes: Uint8Array): { text: string } | { base64: string } {
  try {
    return { text: utf8.decode(bytes) };
  } catch {
    return { base64: Buffer.from(bytes).toString('base64') };
  }
}

/**
 * `maskBody` takes the secrets out of the bytes first: a reply's masker reads the text of the reply, and cannot see
 * a secret inside base64.
 */
export function receiptJson(
  { rawBody, ...receipt }: ReceiptInfo,
  maskBody: (bytes: Uint8Array) => Uint8Array = (bytes) => bytes,
): ReceiptJson {
  if (rawBody === null) return receipt;
  const body = textOrBase64(rawBody);
  return 'text' in body
    ? { ...receipt, rawBody: body.text }
    : { ...receipt, rawBodyBase64: Buffer.from(maskBody(rawBody)).toString('base64') };
}

/** What an operator may change before the request goes in again; absent parts are taken as they came. */
export interface Correction {
  body?: Uint8Array;
  contentType?: string | null;
}

/**
 * A correction as the admin API takes it (docs/reference.md#refused-requests): the body as text, or in base64 for bytes
 * that are not UTF-8, and the content type to read it as; what is not given is taken as it came.
 */
export function correctionOf({
  body,
  body_base64,
  content_type,
}: {
  body?: string;
  body_base64?: string;
  content_type?: string | null;
}): Correction {
  const bytes =
    body !== undefined
      ? new TextEncoder().encode(body)
      : body_base64 !== undefined
        ? new Uint8Array(Buffer.from(body_base64, 'base64'))
        : undefined;
  return {
    ...(bytes === undefined ? {} : { body: bytes }),
    ...(content_type === undefined ? {} : { contentType: content_type }),
  };
}

export interface Ingested {
  receipt: number;
  reply: IntakeReply;
}

/**
 * Runs a refused request through intake again. The call keeps the time the sender sent it, and the receipt is
 * marked with the call it became in the same transaction (CommitInput.ingests), so a receipt is ingested once.
 * A request that is still unreadable is refused with the same error as at first, and nothing changes.
 */
export async function ingestReceipt(
  { store, hooks, ingest, bodyLimitBytes }: ReceiptsDeps,
  given: string | number,
  correction: Correction = {},
): Promise<Ingested> {
  const receipt = await showReceipt({ store }, given);
  const { id } = receipt;
  if (receipt.outcome !== 'rejected')
    throw new CallhookError('CONFLICT', `receipt ${id} is not a refused request (it was ${receipt.outcome})`);
  if (receipt.ingestedAs !== null)
    throw new CallhookError('CONFLICT', `receipt ${id} was ingested already, as call ${receipt.ingestedAs}`);
  const hook = hooks.get(receipt.hook);
  if (!hook)
    throw new CallhookError('CONFLICT', `receipt ${id} is for the hook ${receipt.hook}, which is not configured`);
  if (hook.config.kind === 'in-call')
    throw new CallhookError('CONFLICT', `receipt ${id} is for the in-call hook ${receipt.hook}, which stores no calls`);
  const body = correction.body ?? receipt.rawBody;
  // A refusal before the body was read (too large, a store outage) kept no body: there is nothing to ingest.
  if (body === null)
    throw new CallhookError(
      'CONFLICT',
      `receipt ${id} kept no body (${receipt.error ?? 'refused before it was read'}); give the body to ingest`,
    );
  if (body.byteLength > bodyLimitBytes)
    throw new CallhookError('BODY_TOO_LARGE', `the body is ${body.byteLength} bytes, the limit ${bodyLimitBytes}`);
  const request = {
    hook: receipt.hook,
    method: receipt.method,
    contentType: correction.contentType === undefined ? receipt.contentType : correction.contentType,
    search: receipt.query ?? '',
    body,
    receivedAt: receipt.receivedAt,
    source: 'recovered' as const,
    ingests: id,
  };
  const outcome = await ingest(request).catch(async (err: unknown) => {
    // Two operators ingesting one receipt at once: the store lets one mark it, and the other is told so.
    const now = await store.getReceipt(id);
    if (now?.ingestedAs)
      throw new CallhookError('CONFLICT', `receipt ${id} was ingested already, as call ${now.ingestedAs}`);
    throw err;
  });
  if ('refused' in outcome) throw new CallhookError(outcome.refused.code, outcome.refused.detail);
  return { receipt: id, reply: outcome.reply };
}

/** The operations with their deps bound, for a caller that holds one set of deps (the admin API, the dashboard). */
export function receiptOperations(deps: ReceiptsDeps) {
  return {
    listReceipts: (query: ReceiptsQuery) => listReceipts(deps, query),
    showReceipt: (id: string | number) => showReceipt(deps, id),
    ingestReceipt: (id: string | number, correction?: Correction) => ingestReceipt(deps, id, correction),
  };
}

export type ReceiptOperations = ReturnType<typeof receiptOperations>;
