import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { startReceiver } from '../helpers/receiver.js';

/**
 * A local stand-in for the calling service's REST API (spec section 4, rows 1 to 18) on 127.0.0.1, holding its
 * resources in memory. It answers in the documented shapes, refuses a missing or wrong `x-api-key` with the Error
 * object (section 2.10), and can be told to fail the next requests.
 */

type Row = Record<string, unknown>;

export interface FakeState {
  dialers: Row[];
  inbound: Row[];
  assistants: Row[];
  /** Each with an `id`: the spec's list shows none, this fake gives one as most deployments do. */
  campaigns: Row[];
  audiences: Record<string, Row[]>;
  tags: Row[];
  tagContacts: Record<string, Row[]>;
  segments: Row[];
  playground: Row[];
  knowledgeBases: Record<string, Row[]>;
}

export interface FakeRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export interface FakeService {
  /** `http://127.0.0.1:<port>/api/v1`, as `{base_url}` is (spec section 9). */
  baseUrl: string;
  apiKey: string;
  state: FakeState;
  requests: FakeRequest[];
  /**
   * The next `count` requests get `status` with an Error object, and `retryAfter` as a Retry-After header when
   * given; `hang` makes them never answer instead.
   */
  failNext(count: number, status?: number | 'hang', retryAfter?: string): void;
  close(): Promise<void>;
}

class Refusal extends Error {
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

export async function startFakeService({
  apiKey = 'svc-key-0123456789',
  state = {},
}: {
  apiKey?: string;
  state?: Partial<FakeState>;
} = {}): Promise<FakeService> {
  const s: FakeState = {
    dialers: [],
    inbound: [],
    assistants: [],
    campaigns: [],
    audiences: {},
    tags: [],
    tagContacts: {},
    segments: [],
    playground: [],
    knowledgeBases: {},
    ...state,
  };
  const requests: FakeRequest[] = [];
  let failures: { count: number; status: number | 'hang'; retryAfter?: string } = { count: 0, status: 500 };

  const need = (body: Row, ...fields: string[]) => {
    const missing = fields.find((f) => typeof body[f] !== 'string' || body[f] === '');
    if (missing) throw new Refusal(400, `${missing} is required`);
  };
  const byId = (rows: Row[], id: string, what: string, status = 404) => {
    const row = rows.find((r) => String(r.id) === id);
    if (!row) throw new Refusal(status, `${what} not found`);
    return row;
  };
  const known = <T>(map: Record<string, T>, id: string, what: string): T => {
    if (!Object.hasOwn(map, id)) throw new Refusal(404, `${what} not found`);
    return map[id]!;
  };

  /** One entry per row of the endpoint table: `METHOD path` → what it answers. */
  const routes: Record<string, (q: Record<string, string>, body: Row) => unknown> = {
    'POST /dialer/create': (_q, b) => (s.dialers.push(b), b),
    'GET /dialer/list': () => s.dialers,
    'POST /inbound/create': (_q, b) => {
      need(b, 'name', 'assistant_id', 'dialer_id');
      const row = { id: randomUUID(), notification: false, incoming_count: 0, ...b };
      s.inbound.push(row);
      return row;
    },
    'PUT /inbound/update': (q, b) => {
      // Spec section 7: a failed inbound update is a 400, the one status the spec gives.
      const row = byId(s.inbound, q.id ?? '', 'inbound assistant', 400);
      // Spec rule 1: the full body must be sent.
      need(b, 'name', 'assistant_id', 'dialer_id');
      return Object.assign(row, b);
    },
    'POST /user/createAssistant': (_q, b) => {
      const row = { id: randomUUID(), ...b };
      s.assistants.push(row);
      return row;
    },
    'GET /user/listAssistant': () => s.assistants,
    'DELETE /user/deleteassistant': (q) => {
      byId(s.assistants, q.id ?? '', 'assistant');
      s.assistants = s.assistants.filter((a) => String(a.id) !== q.id);
      return undefined;
    },
    'GET /campaign/list': () => s.campaigns,
    'POST /campaign/audiences': (q) => known(s.audiences, q.id ?? '', 'campaign'),
    'GET /tag/list': () => s.tags,
    'PUT /tag/update': (q, b) =>
      Object.assign(byId(s.tags, q.id ?? '', 'tag'), { name: b.name, description: b.description }),
    'POST /tag/contact/create': (q, b) => {
      byId(s.tags, q.id ?? '', 'tag');
      (s.tagContacts[q.id!] ??= []).push({ id: randomUUID(), sync_by: 'api', ...b });
      return { message: 'Contact created successfully' };
    },
    'PUT /tag/contact/update': (q, b) => {
      const contact = Object.values(s.tagContacts)
        .flat()
        .find((c) => c.id === q.id);
      if (!contact) throw new Refusal(404, 'contact not found');
      Object.assign(contact, b);
      return { message: 'Contact updated successfully' };
    },
    'POST /tag/contact/list': (q) => {
      byId(s.tags, q.id ?? '', 'tag');
      return s.tagContacts[q.id!] ?? [];
    },
    'POST /segment/create': (_q, b) => {
      need(b, 'name', 'description');
      s.segments.push({ name: b.name, description: b.description });
      return { name: b.name, description: b.description };
    },
    'GET /playground/list': () => s.playground,
    'GET /knowledgeBase/chunks': (q) => {
      const entries = known(s.knowledgeBases, q.id ?? '', 'knowledge base');
      const page = Number(q.page ?? 1);
      const limit = Number(q.limit ?? 20);
      const chunks = entries.slice((page - 1) * limit, page * limit);
      return {
        success: true,
        message: 'ok',
        data: {
          chunks,
          pagination: { total: entries.length, total_pages: Math.ceil(entries.length / limit), page, limit },
        },
      };
    },
    'PUT /knowledgeBase/chunks/update': (q, b) => {
      const entry = known(s.knowledgeBases, q.id ?? '', 'knowledge base').find((e) => e.node_id === b.node_id);
      if (!entry) throw new Refusal(404, 'entry not found');
      Object.assign(entry, b);
      return { success: true, message: 'Entry updated and re-embedded' };
    },
  };

  const answer = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    if (body === undefined) return res.writeHead(status, headers).end();
    res.writeHead(status, { ...headers, 'content-type': 'application/json' }).end(JSON.stringify(body));
  };

  // The server is the shared local receiver; this answers its requests as the service would.
  const receiver = await startReceiver((req, res) => {
    const url = new URL(req.url || '/', 'http://fake');
    let body: unknown;
    try {
      body = req.body === '' ? undefined : JSON.parse(req.body);
    } catch {
      return answer(res, 400, { error: 400, message: 'Invalid JSON' });
    }
    const path = url.pathname.replace(/^\/api\/v1/, '');
    const query = Object.fromEntries(url.searchParams);
    requests.push({ method: req.method, path, query, headers: req.headers, body });
    if (failures.count > 0) {
      failures.count--;
      if (failures.status === 'hang') return;
      const headers: Record<string, string> =
        failures.retryAfter === undefined ? {} : { 'retry-after': failures.retryAfter };
      return answer(res, failures.status, { error: failures.status, message: 'Service unavailable' }, headers);
    }
    if (req.headers['x-api-key'] !== apiKey) return answer(res, 401, { error: 401, message: 'Invalid API key' });
    const route = url.pathname.startsWith('/api/v1/') ? routes[`${req.method} ${path}`] : undefined;
    if (!route) return answer(res, 404, { error: 404, message: `no route ${req.method} ${url.pathname}` });
    try {
      answer(res, 200, route(query, (body ?? {}) as Row));
    } catch (err) {
      if (!(err instanceof Refusal)) throw err;
      answer(res, err.status, { error: err.status, message: err.message });
    }
  });

  return {
    baseUrl: `${receiver.url}/api/v1`,
    apiKey,
    state: s,
    requests,
    failNext(count, status = 500, retryAfter) {
      failures = { count, status, retryAfter };
    },
    close: () => receiver.close(),
  };
}
