import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { describeFetchError } from '../fetch-error.js';
import { CallingServiceError } from './errors.js';
import {
  type Assistant,
  assistantSchema,
  audienceSchema,
  campaignSchema,
  chunksEnvelopeSchema,
  type Dialer,
  dialerSchema,
  type InboundRequest,
  inboundRequestSchema,
  inboundSchema,
  type KnowledgeEntry,
  type KnowledgeEntryUpdate,
  knowledgeEntryUpdateSchema,
  messageSchema,
  playgroundEntrySchema,
  type SegmentRequest,
  segmentRequestSchema,
  segmentSchema,
  successSchema,
  type TagContactRequest,
  tagContactRequestSchema,
  tagContactSchema,
  tagSchema,
  tagUpdateSchema,
} from './schemas.js';

/**
 * A typed client of the calling service's REST API (spec section 4, rows 1 to 18). Every request carries the
 * account key as `x-api-key` (section 5); a reply that is not 2xx becomes a CallingServiceError with the Error
 * object's message (section 2.10). Reads — the GETs and the POSTs that only read a list (rule 6: endpoints 9 and
 * 14) — are retried on network errors, time-outs and 5xx; writes never are, since the service documents no
 * idempotency and a repeated create would add a second contact or assistant.
 */

export interface ClientOptions {
  /** `{base_url}`, which ends in `/api/v1` (spec section 9). */
  baseUrl: string;
  apiKey: string;
  /** Per attempt. */
  timeoutMs?: number;
  /** Extra attempts of a read after the first. */
  retries?: number;
  /** The wait before the first retry; it doubles each time. */
  retryDelayMs?: number;
  fetch?: typeof globalThis.fetch;
}

export interface CallOptions {
  /** Aborts the call; the client then rejects with the signal's reason. */
  signal?: AbortSignal;
}

interface Request<S extends z.ZodType | undefined> {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  query?: Record<string, string | number>;
  body?: unknown;
  /** The shape the spec gives the request body, checked before anything is sent. */
  check?: z.ZodType;
  /** undefined: the reply has no body (endpoint 7). */
  schema: S;
  read: boolean;
}

/** The application asks for 20 entries a page (spec section 8); a server whose pages never end is cut off. */
const PAGE_SIZE = 20;
const MAX_PAGES = 10_000;

export type CallingServiceClient = ReturnType<typeof createClient>;

export function createClient({
  baseUrl,
  apiKey,
  timeoutMs = 10_000,
  retries = 2,
  retryDelayMs = 250,
  fetch = globalThis.fetch,
}: ClientOptions) {
  const base = checkBaseUrl(baseUrl);
  if (typeof apiKey !== 'string' || apiKey.trim() === '')
    throw new Error('apiKey: the account API key is required (it is sent as x-api-key)');
  if (!Number.isInteger(retries) || retries < 0)
    throw new Error(`retries: must be a whole number of extra attempts, not ${retries}`);
  if (!(timeoutMs > 0)) throw new Error(`timeoutMs: must be above 0, not ${timeoutMs}`);

  async function call<S extends z.ZodType | undefined>(
    req: Request<S>,
    { signal }: CallOptions = {},
  ): Promise<S extends z.ZodType ? z.output<S> : void> {
    if (req.check) req = { ...req, body: requestBody(req.check, req.body) };
    for (let attempt = 0; ; attempt++) {
      try {
        // biome-ignore lint/suspicious/noConfusingVoidType: a request with no reply schema resolves to nothing.
        return (await once(req, signal)) as S extends z.ZodType ? z.output<S> : void;
      } catch (err) {
        const retryable = err instanceof CallingServiceError && (err.status === 0 || err.status >= 500);
        if (!req.read || !retryable || attempt >= retries || signal?.aborted) throw err;
        await sleep(retryDelayMs * 2 ** attempt, undefined, { signal });
      }
    }
  }

  async function once(req: Request<z.ZodType | undefined>, signal: AbortSignal | undefined): Promise<unknown> {
    const url = new URL(`${base}${req.path}`);
    for (const [name, value] of Object.entries(req.query ?? {})) url.searchParams.set(name, String(value));
    const headers: Record<string, string> = {
      'x-api-key': apiKey,
      accept: 'application/json',
      'user-agent': 'callhook',
    };
    if (req.body !== undefined) headers['content-type'] = 'application/json';
    const timeout = AbortSignal.timeout(timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const where = `${req.method} ${req.path}`;
    let status = 0;
    let retryAfter: string | undefined;
    let text: string;
    try {
      // fetch would carry x-api-key along a redirect to any host (it drops only Authorization): none is followed.
      const response = await fetch(url, {
        method: req.method,
        headers,
        body: req.body === undefined ? undefined : JSON.stringify(req.body),
        signal: combined,
        redirect: 'error',
      });
      status = response.status;
      retryAfter = response.headers.get('retry-after') ?? undefined;
      text = await response.text();
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      const why = timeout.aborted ? `no reply within ${timeoutMs} ms` : `network error: ${describeFetchError(err)}`;
      throw new CallingServiceError(`${where}: ${why}`, { status, cause: err });
    }
    if (status < 200 || status > 299) throw CallingServiceError.fromReply(status, text, { secret: apiKey, retryAfter });
    if (req.schema === undefined) return undefined;
    let value: unknown;
    try {
      // A reply documented as an object may come empty; it is read as one with nothing in it.
      value = text.trim() === '' ? {} : JSON.parse(text);
    } catch (err) {
      throw new CallingServiceError(`${where}: the reply is not JSON`, { status, cause: err });
    }
    const parsed = req.schema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new CallingServiceError(
        `${where}: the reply does not have the documented shape (${issue.path.join('.') || 'body'}: ${issue.message})`,
        { status },
      );
    }
    return parsed.data;
  }

  const read = <S extends z.ZodType>(
    method: 'GET' | 'POST',
    path: string,
    schema: S,
    query?: Record<string, string | number>,
  ): Request<S> => ({ method, path, schema, query, read: true });
  const write = <S extends z.ZodType | undefined>(
    method: 'POST' | 'PUT' | 'DELETE',
    path: string,
    schema: S,
    body?: unknown,
    query?: Record<string, string>,
    check?: z.ZodType,
  ): Request<S> => ({ method, path, schema, body, query, check, read: false });
  const list = <S extends z.ZodType>(schema: S) => z.array(schema);

  /** Pages are 1-based (spec row 17); their defaults are not shown (rule 4), so both are always sent. */
  const knowledgeBaseChunks = async (
    hashId: string,
    { page = 1, limit = PAGE_SIZE }: { page?: number; limit?: number } = {},
    o?: CallOptions,
  ) => {
    if (!Number.isInteger(page) || page < 1) throw new RangeError(`page: must be a whole number from 1, not ${page}`);
    if (!Number.isInteger(limit) || limit < 1)
      throw new RangeError(`limit: must be a whole number from 1, not ${limit}`);
    return call(read('GET', '/knowledgeBase/chunks', chunksEnvelopeSchema, { id: hashId, page, limit }), o);
  };

  return {
    /** 1 */ createDialer: (dialer: Dialer, o?: CallOptions) =>
      call(write('POST', '/dialer/create', dialerSchema, dialer), o),
    /** 2 */ listDialers: (o?: CallOptions) => call(read('GET', '/dialer/list', list(dialerSchema)), o),
    /** 3 */ createInbound: (body: InboundRequest, o?: CallOptions) =>
      call(write('POST', '/inbound/create', inboundSchema, body, undefined, inboundRequestSchema), o),
    /** 4: the full body, every field to keep or change (spec rule 1). */
    updateInbound: (id: string, body: InboundRequest, o?: CallOptions) =>
      call(write('PUT', '/inbound/update', inboundSchema, body, { id }, inboundRequestSchema), o),
    /** 5 */ createAssistant: (assistant: Assistant, o?: CallOptions) =>
      call(write('POST', '/user/createAssistant', assistantSchema, assistant), o),
    /** 6 */ listAssistants: (o?: CallOptions) => call(read('GET', '/user/listAssistant', list(assistantSchema)), o),
    /** 7: the reply has no body. */
    deleteAssistant: (id: string, o?: CallOptions) =>
      call(write('DELETE', '/user/deleteassistant', undefined, undefined, { id }), o),
    /** 8 */ listCampaigns: (o?: CallOptions) => call(read('GET', '/campaign/list', list(campaignSchema)), o),
    /** 9: a POST with no body that reads the list (spec rule 6). */
    campaignAudiences: (campaignId: string, o?: CallOptions) =>
      call(read('POST', '/campaign/audiences', list(audienceSchema), { id: campaignId }), o),
    /** 10 */ listTags: (o?: CallOptions) => call(read('GET', '/tag/list', list(tagSchema)), o),
    /** 11 */ updateTag: (id: string, body: { name: string; description: string }, o?: CallOptions) =>
      call(write('PUT', '/tag/update', tagSchema, body, { id }, tagUpdateSchema), o),
    /** 12 */ createTagContact: (tagId: string, contact: TagContactRequest, o?: CallOptions) =>
      call(write('POST', '/tag/contact/create', messageSchema, contact, { id: tagId }, tagContactRequestSchema), o),
    /** 13 */ updateTagContact: (contactId: string, contact: TagContactRequest, o?: CallOptions) =>
      call(write('PUT', '/tag/contact/update', messageSchema, contact, { id: contactId }, tagContactRequestSchema), o),
    /** 14: a POST with no body that reads the list (spec rule 6). */
    listTagContacts: (tagId: string, o?: CallOptions) =>
      call(read('POST', '/tag/contact/list', list(tagContactSchema), { id: tagId }), o),
    /** 15 */ createSegment: (segment: SegmentRequest, o?: CallOptions) =>
      call(write('POST', '/segment/create', segmentSchema, segment, undefined, segmentRequestSchema), o),
    /** 16 */ listPlayground: (o?: CallOptions) =>
      call(read('GET', '/playground/list', list(playgroundEntrySchema)), o),
    /** 17: one page, as the envelope of spec rule 2. */
    knowledgeBaseChunks,
    /** 17, every page: walks pages of 20 until the last one the pagination names, or an empty page. */
    async allKnowledgeBaseChunks(hashId: string, o?: CallOptions): Promise<KnowledgeEntry[]> {
      const entries: KnowledgeEntry[] = [];
      for (let page = 1; page <= MAX_PAGES; page++) {
        const { data } = await knowledgeBaseChunks(hashId, { page, limit: PAGE_SIZE }, o);
        entries.push(...data.chunks);
        const last = data.pagination?.total_pages;
        if (data.chunks.length === 0 || (last !== undefined && page >= last)) return entries;
      }
      throw new CallingServiceError(`GET /knowledgeBase/chunks: more than ${MAX_PAGES} pages; stopped`, {
        status: 200,
      });
    },
    /** 18: re-embeds that one entry, named by node_id (spec rule 3). */
    updateKnowledgeBaseChunk: (hashId: string, entry: KnowledgeEntryUpdate, o?: CallOptions) =>
      call(
        write('PUT', '/knowledgeBase/chunks/update', successSchema, entry, { id: hashId }, knowledgeEntryUpdateSchema),
        o,
      ),
  };
}

function checkBaseUrl(baseUrl: string): string {
  const url = typeof baseUrl === 'string' && URL.canParse(baseUrl) ? new URL(baseUrl) : undefined;
  const path = url?.pathname.replace(/\/+$/, '');
  if (!url || !/^https?:$/.test(url.protocol) || !path?.endsWith('/api/v1') || url.search || url.hash) {
    throw new Error(
      `baseUrl: must be the service's http(s) base URL ending in /api/v1 (spec section 9), not "${baseUrl}"`,
    );
  }
  return `${url.origin}${path}`;
}

/** A request body the spec constrains is checked before it leaves, so a mistake is ours to see, not a vague 400. */
function requestBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new TypeError(`request body: ${issue.path.join('.') || 'body'}: ${issue.message}`);
}
