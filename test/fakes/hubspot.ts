import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fakeCrm, HubSpotError, type HubSpotObject, type ObjectType } from './hubspot-crm.js';

/**
 * A local stand-in for the HubSpot CRM API, for tests only: exactly the requests the hubspot sink makes, checked as
 * HubSpot documents them (bearer token, scopes, body shapes, property names, association type), answered in
 * HubSpot's shapes, its objects kept in memory. Documentation followed:
 * - contacts and batch upsert: https://developers.hubspot.com/docs/api/crm/contacts,
 *   https://developers.hubspot.com/docs/api-reference/legacy/crm/objects/contacts/batch/upsert-contacts
 * - search: https://developers.hubspot.com/docs/api/crm/search (filterGroups ORed, at most 5; a new object is
 *   searchable only after a few seconds: `indexLagMs`)
 * - calls: https://developers.hubspot.com/docs/api/crm/calls (association call → contact, HUBSPOT_DEFINED 194)
 * - associations v4, default association: https://developers.hubspot.com/docs/api/crm/associations
 * - errors: https://developers.hubspot.com/docs/api/error-handling (`{status, message, correlationId, category}`)
 * - limits: https://developers.hubspot.com/docs/developer-tooling/platform/usage-guidelines (429 with `errorType:
 *   RATE_LIMIT` and `policyName`, `X-HubSpot-RateLimit-*` headers on every response but the searches')
 */

export type Failure = 'rate-limit' | 'search-rate-limit' | 'server-error' | 'lost-reply';

export interface Seen {
  /** When it arrived (ms since the epoch). */
  at: number;
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: unknown;
}

export interface FakeHubSpot {
  url: string;
  token: string;
  contacts: Map<string, HubSpotObject>;
  calls: Map<string, HubSpotObject>;
  requests: Seen[];
  /** A contact as if someone had typed it into HubSpot, searchable at once; `modifiedAt` sets its last change. */
  addContact(properties: Record<string, string>, options?: { modifiedAt?: string }): string;
  /** The next `times` requests whose `METHOD path` matches `on` fail that way. */
  fail(failure: Failure, options?: { times?: number; on?: RegExp }): void;
  /** The private app's token is deleted (401 INVALID_AUTHENTICATION) or expired (401 EXPIRED_AUTHENTICATION). */
  revoke(how?: 'revoked' | 'expired'): void;
  /** The token works again. */
  restore(): void;
  scopes: Set<string>;
  close(): Promise<void>;
}

const READ = 'crm.objects.contacts.read';
const WRITE = 'crm.objects.contacts.write';

export async function startFakeHubSpot({
  indexLagMs = 0,
  rateLimitIntervalMs = 10_000,
}: {
  indexLagMs?: number;
  rateLimitIntervalMs?: number;
} = {}): Promise<FakeHubSpot> {
  const token = `pat-na1-${randomUUID()}`;
  let tokenState: 'valid' | 'revoked' | 'expired' = 'valid';
  const crm = fakeCrm({ indexLagMs });
  const requests: Seen[] = [];
  const failures: { failure: Failure; on: RegExp }[] = [];
  const scopes = new Set([READ, WRITE]);

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = text === '' ? undefined : JSON.parse(text);
      } catch {
        body = Symbol('invalid');
      }
      requests.push({ at: Date.now(), method: req.method ?? '', path, headers: req.headers, body });
      const search = path.endsWith('/search');
      const index = failures.findIndex((f) => f.on.test(`${req.method} ${path}`));
      const [failure] = index === -1 ? [] : failures.splice(index, 1);
      try {
        if (failure?.failure === 'rate-limit') {
          throw new HubSpotError(429, 'You have reached your ten_secondly_rolling limit.', '', {
            errorType: 'RATE_LIMIT',
            policyName: 'TEN_SECONDLY_ROLLING',
            headers: { 'x-hubspot-ratelimit-remaining': '0' },
          });
        }
        if (failure?.failure === 'search-rate-limit')
          throw new HubSpotError(429, 'You have reached your secondly limit.', '', {
            errorType: 'RATE_LIMIT',
            policyName: 'SECONDLY',
          });
        if (failure?.failure === 'server-error') throw new HubSpotError(502, 'Bad Gateway', 'INTERNAL_ERROR');
        const reply = route(req, path, body);
        if (failure?.failure === 'lost-reply') {
          // HubSpot did the work; the answer never arrives.
          res.socket?.destroy();
          return;
        }
        send(res, reply.status, reply.body, search ? {} : rateHeaders());
      } catch (err) {
        if (!(err instanceof HubSpotError)) throw err;
        const { headers = {}, ...extra } = err.extra as { headers?: Record<string, string> };
        const category = err.category ? { category: err.category } : {};
        send(
          res,
          err.status,
          { status: 'error', message: err.message, correlationId: randomUUID(), ...extra, ...category },
          search ? {} : { ...rateHeaders(), ...headers },
        );
      }
    });
  });

  function rateHeaders(): Record<string, string> {
    return {
      'x-hubspot-ratelimit-daily': '250000',
      'x-hubspot-ratelimit-daily-remaining': String(250000 - requests.length),
      'x-hubspot-ratelimit-interval-milliseconds': String(rateLimitIntervalMs),
      'x-hubspot-ratelimit-max': '100',
      'x-hubspot-ratelimit-remaining': '99',
    };
  }

  function route(req: IncomingMessage, path: string, body: unknown): { status: number; body: unknown } {
    checkToken(req.headers.authorization);
    if (typeof body === 'symbol')
      throw new HubSpotError(400, 'Invalid input JSON on line 1, column 1: Unexpected character', 'VALIDATION_ERROR');
    if (body !== undefined && !/^application\/json\b/.test(req.headers['content-type'] ?? ''))
      throw new HubSpotError(415, 'Unsupported Media Type', 'VALIDATION_ERROR');
    const v4 = /^\/crm\/v4\/objects\/calls\/([^/]+)\/associations\/default\/contacts\/([^/]+)$/.exec(path);
    if (v4 && req.method === 'PUT') {
      needScope(WRITE);
      return { status: 200, body: crm.associateDefault(v4[1]!, v4[2]!) };
    }
    const match = /^\/crm\/v3\/objects\/(contacts|calls)(?:\/(search|batch\/upsert|[^/]+))?$/.exec(path);
    if (!match) throw new HubSpotError(404, `No route for ${req.method} ${path}`, 'OBJECT_NOT_FOUND');
    const type = match[1] as ObjectType;
    const rest = match[2];
    needScope(req.method === 'POST' && rest === 'search' ? READ : WRITE);
    if (req.method === 'POST' && rest === 'search') return { status: 200, body: crm.search(type, body) };
    if (req.method === 'POST' && rest === 'batch/upsert' && type === 'contacts')
      return { status: 200, body: crm.upsert(body) };
    if (req.method === 'POST' && rest === undefined) return { status: 201, body: crm.create(type, body) };
    if (req.method === 'PATCH' && rest !== undefined) return { status: 200, body: crm.update(type, rest, body) };
    throw new HubSpotError(405, `${req.method} is not allowed on ${path}`, 'VALIDATION_ERROR');
  }

  function checkToken(header: string | undefined): void {
    const presented = /^Bearer (\S+)$/.exec(header ?? '')?.[1];
    if (presented === token && tokenState === 'expired')
      throw new HubSpotError(
        401,
        'The OAuth token used to make this call expired 1 day(s) ago.',
        'EXPIRED_AUTHENTICATION',
      );
    if (presented !== token || tokenState === 'revoked') {
      throw new HubSpotError(
        401,
        'Authentication credentials not found. This API supports OAuth 2.0 authentication and you can find more details at https://developers.hubspot.com/docs/methods/auth/oauth-overview',
        'INVALID_AUTHENTICATION',
      );
    }
  }

  function needScope(scope: string): void {
    if (scopes.has(scope)) return;
    throw new HubSpotError(
      403,
      "This app hasn't been granted all required scopes to make this call. Read more about required scopes here: https://developers.hubspot.com/scopes.",
      'MISSING_SCOPES',
      {
        errors: [
          {
            message: 'One or more of the following scopes are required.',
            context: { requiredGranularScopes: [scope] },
          },
        ],
        links: { scopes: 'https://developers.hubspot.com/scopes' },
      },
    );
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    token,
    contacts: crm.contacts,
    calls: crm.calls,
    requests,
    scopes,
    addContact(props, { modifiedAt } = {}) {
      const at = modifiedAt ?? new Date().toISOString();
      return crm.make('contacts', props, at, -Infinity).id;
    },
    fail(failure, { times = 1, on = /./ } = {}) {
      for (let i = 0; i < times; i++) failures.push({ failure, on });
    },
    revoke(how = 'revoked') {
      tokenState = how;
    },
    restore() {
      tokenState = 'valid';
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string>): void {
  res.writeHead(status, { 'content-type': 'application/json;charset=utf-8', ...headers }).end(JSON.stringify(body));
}
