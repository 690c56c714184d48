import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { type Received, startReceiver } from '../helpers/receiver.js';

/**
 * A local stand-in for the HighLevel API 2.0 endpoints the sink calls, imported by tests only. It follows the
 * OpenAPI document (https://github.com/GoHighLevel/highlevel-api-docs apps/contacts.json) and the search guide it
 * links to: `Authorization: Bearer` and `Version: 2021-07-28` checked, bodies checked against UpsertContactDto,
 * UpdateContactDto, TagsDTO, NotesDTO and the search body (a property a DTO does not have is refused as HighLevel's
 * validation does, 422 `property X should not exist`), replies in the documented shapes, errors in the documented
 * bodies (`{ statusCode, message, error }`), and the five `X-RateLimit-*` headers on every reply. Contacts and notes
 * live in memory. It can be told to answer 429s, to revoke the token, to drop a scope, or to lose a reply after doing
 * the work.
 */

import {
  type Body,
  badRequest,
  checkContact,
  checkNote,
  checkSearch,
  type FakeContact,
  type FakeNote,
  Refusal,
  searchContacts,
  UPDATE_FIELDS,
  UPSERT_FIELDS,
  unprocessable,
} from './gohighlevel-api.js';

export type { FakeContact, FakeNote } from './gohighlevel-api.js';

export interface FakeRequest {
  method: string;
  path: string;
  headers: Received['headers'];
  body: unknown;
  /** When it arrived (Date.now()). */
  at: number;
}

export interface FakeGoHighLevel {
  url: string;
  token: string;
  locationId: string;
  contacts: FakeContact[];
  notes: FakeNote[];
  requests: FakeRequest[];
  /** A contact as someone typed it into HighLevel, `dateUpdated` included when a test needs an order. */
  addContact(fields: Partial<FakeContact>): FakeContact;
  notesOf(contactId: string): FakeNote[];
  /** The next `count` requests get a 429 with no burst request remaining and `intervalMs` as the window. */
  rateLimitNext(count: number, intervalMs?: number): void;
  /** The next `count` requests get `status` with a documented error body. */
  failNext(count: number, status: number): void;
  /** The token stops working, as one revoked or expired: 401 from then on. */
  revoke(): void;
  /** The token loses a scope (`contacts.write`): requests needing it get 401 "not authorized for this scope". */
  dropScope(scope: string): void;
  /** The next request matching does its work, then the connection is destroyed before any answer. */
  loseReply(method: string, path: RegExp): void;
  close(): Promise<void>;
}

export interface FakeOptions {
  token?: string;
  locationId?: string;
  /**
   * The location's "Allow Duplicate Contact" setting: on, the upsert creates a contact every time unless it is sent
   * `createNewIfDuplicateAllowed: false`. The document says only a `true` creates; before the flag it said just that
   * the upsert "will adhere to" the setting, and the fake keeps that stricter reading for a body without the flag.
   */
  allowDuplicates?: boolean;
  /**
   * The location's deduplication preferences: the field the upsert matches on first, and an optional second one
   * (email, then phone, by default). Of several contacts with the field, the one added first.
   */
  duplicateFields?: readonly ('email' | 'phone')[];
  /** "Updates may take a few seconds to appear in the search results": a contact this new is not found by search. */
  searchLagMs?: number;
}

export async function startFakeGoHighLevel({
  token = 'pit-0f3c9a71-5b2e-4d8e-9c1a-7e6f5d4c3b2a',
  locationId = 've9EPM428h8vShlRW1KT',
  allowDuplicates = false,
  duplicateFields = ['email', 'phone'],
  searchLagMs = 0,
}: FakeOptions = {}): Promise<FakeGoHighLevel> {
  const contacts: FakeContact[] = [];
  const notes: FakeNote[] = [];
  const requests: FakeRequest[] = [];
  const scopes = new Set(['contacts.readonly', 'contacts.write']);
  let revoked = false;
  let limited: { count: number; intervalMs: number } = { count: 0, intervalMs: 10_000 };
  let failing: { count: number; status: number } = { count: 0, status: 500 };
  let losing: { method: string; path: RegExp } | undefined;
  let served = 0;

  const id = () =>
    randomBytes(15)
      .toString('base64')
      .replace(/[^A-Za-z0-9]/g, '')
      .padEnd(20, 'x')
      .slice(0, 20);
  const now = () => new Date().toISOString();

  const contactById = (contactId: string) => {
    const contact = contacts.find((c) => c.id === contactId && c.locationId === locationId);
    if (!contact) throw badRequest('Contact not found');
    return contact;
  };

  /** Writes the given fields only; custom fields merge by key or id, as HighLevel keeps the ones not given. */
  const write = (contact: FakeContact, fields: Body) => {
    for (const [field, value] of Object.entries(fields)) {
      if (field === 'customFields') {
        for (const given of value as { id?: string; key?: string; field_value: unknown }[]) {
          const same = contact.customFields.find(
            (c) => (given.id !== undefined && c.id === given.id) || (given.key !== undefined && c.key === given.key),
          );
          if (same) same.value = given.field_value;
          else
            contact.customFields.push({
              ...(given.id !== undefined && { id: given.id }),
              ...(given.key !== undefined && { key: given.key }),
              value: given.field_value,
            });
        }
      } else if (field !== 'locationId' && field !== 'createNewIfDuplicateAllowed') {
        contact[field] = value;
      }
    }
    contact.dateUpdated = now();
  };

  const create = (fields: Partial<FakeContact>): FakeContact => {
    const at = now();
    const contact: FakeContact = { id: id(), locationId, tags: [], customFields: [], dateAdded: at, dateUpdated: at };
    Object.assign(contact, fields);
    contacts.push(contact);
    return contact;
  };

  /** The contact the upsert updates, by the location's settings (above); none when it creates one. */
  const duplicateOf = (fields: Body) => {
    if (allowDuplicates && fields.createNewIfDuplicateAllowed !== false) return undefined;
    const mine = contacts.filter((c) => c.locationId === locationId);
    for (const field of duplicateFields) {
      const given = fields[field];
      if (typeof given !== 'string' || given === '') continue;
      const same = (have: string | null | undefined) =>
        field === 'email' ? have?.toLowerCase() === given.toLowerCase() : have === given;
      const match = mine.find((c) => same(c[field]));
      if (match) return match;
    }
    return undefined;
  };

  const search = (body: unknown) => {
    const asked = checkSearch(body);
    if (asked.locationId !== locationId)
      throw new Refusal(403, { statusCode: 403, message: 'The token does not have access to this location.' });
    const indexed = (c: FakeContact) => Date.now() - Date.parse(c.dateAdded) >= searchLagMs;
    return searchContacts(
      contacts.filter((c) => c.locationId === locationId && indexed(c)),
      asked,
    );
  };

  /** `METHOD path` → the scope it needs (the OpenAPI document's `security`) and what it answers. */
  const routes: {
    method: string;
    path: RegExp;
    scope: string;
    answer: (body: unknown, params: string[]) => [number, unknown];
  }[] = [
    { method: 'POST', path: /^\/contacts\/search$/, scope: 'contacts.readonly', answer: (body) => [200, search(body)] },
    {
      method: 'POST',
      path: /^\/contacts\/upsert$/,
      scope: 'contacts.write',
      answer: (body) => {
        const fields = checkContact(body, UPSERT_FIELDS);
        if (typeof fields.locationId !== 'string') throw unprocessable(['locationId must be a string']);
        if (fields.locationId !== locationId)
          throw new Refusal(403, { statusCode: 403, message: 'The token does not have access to this location.' });
        const existing = duplicateOf(fields);
        const contact = existing ?? create({});
        write(contact, fields);
        return [200, { new: existing === undefined, contact: { ...contact }, traceId: id() }];
      },
    },
    {
      method: 'PUT',
      path: /^\/contacts\/([^/]+)$/,
      scope: 'contacts.write',
      answer: (body, [contactId]) => {
        const fields = checkContact(body, UPDATE_FIELDS);
        const contact = contactById(contactId!);
        write(contact, fields);
        return [200, { succeded: true, contact: { ...contact } }];
      },
    },
    {
      method: 'POST',
      path: /^\/contacts\/([^/]+)\/tags$/,
      scope: 'contacts.write',
      answer: (body, [contactId]) => {
        const tags = (body as { tags?: unknown } | null)?.tags;
        if (!Array.isArray(tags) || !tags.every((t) => typeof t === 'string'))
          throw unprocessable(['each value in tags must be a string', 'tags must be an array']);
        const extra = Object.keys(body as Body).filter((k) => k !== 'tags');
        if (extra.length > 0) throw unprocessable(extra.map((k) => `property ${k} should not exist`));
        const contact = contactById(contactId!);
        contact.tags = [...new Set([...contact.tags, ...tags])];
        contact.dateUpdated = now();
        return [201, { tags: contact.tags }];
      },
    },
    {
      method: 'GET',
      path: /^\/contacts\/([^/]+)\/notes$/,
      scope: 'contacts.readonly',
      answer: (_body, [contactId]) => [200, { notes: notesOf(contactById(contactId!).id) }],
    },
    {
      method: 'POST',
      path: /^\/contacts\/([^/]+)\/notes$/,
      scope: 'contacts.write',
      answer: (body, [contactId]) => {
        const given = checkNote(body);
        const contact = contactById(contactId!);
        const created: FakeNote = {
          id: id(),
          contactId: contact.id,
          body: given.body,
          ...(given.userId && { userId: given.userId }),
          dateAdded: now(),
        };
        notes.push(created);
        return [201, { note: created }];
      },
    },
    {
      method: 'PUT',
      path: /^\/contacts\/([^/]+)\/notes\/([^/]+)$/,
      scope: 'contacts.write',
      answer: (body, [contactId, noteId]) => {
        const given = checkNote(body);
        const found = notes.find((n) => n.id === noteId && n.contactId === contactById(contactId!).id);
        if (!found) throw badRequest('Note not found');
        found.body = given.body;
        if (given.userId) found.userId = given.userId;
        return [200, { note: found }];
      },
    },
  ];

  const notesOf = (contactId: string) => notes.filter((n) => n.contactId === contactId);

  const rateHeaders = (remaining: number, intervalMs: number) => ({
    'x-ratelimit-limit-daily': '200000',
    'x-ratelimit-daily-remaining': String(Math.max(0, 200_000 - served)),
    'x-ratelimit-interval-milliseconds': String(intervalMs),
    'x-ratelimit-max': '100',
    'x-ratelimit-remaining': String(remaining),
  });

  const reply = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res
      .writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...rateHeaders(99, 10_000), ...headers })
      .end(JSON.stringify(body));
  };

  const receiver = await startReceiver((req, res) => {
    served++;
    const url = new URL(req.url, 'http://fake');
    let body: unknown;
    try {
      body = req.body === '' ? undefined : JSON.parse(req.body);
    } catch {
      return reply(res, 400, { statusCode: 400, message: 'Unexpected token in JSON body' });
    }
    requests.push({ method: req.method, path: url.pathname, headers: req.headers, body, at: Date.now() });

    if (limited.count > 0) {
      limited.count--;
      return reply(res, 429, { statusCode: 429, message: 'Too Many Requests' }, rateHeaders(0, limited.intervalMs));
    }
    if (failing.count > 0) {
      failing.count--;
      return reply(res, failing.status, {
        statusCode: failing.status,
        message: failing.status >= 500 ? 'Internal Server Error' : 'Refused',
      });
    }
    if (req.headers.authorization !== `Bearer ${token}` || revoked) {
      return reply(res, 401, { statusCode: 401, message: 'Invalid JWT', error: 'Unauthorized' });
    }
    if (req.headers.version !== '2021-07-28')
      return reply(res, 400, { statusCode: 400, message: 'Version header is missing or not 2021-07-28' });

    const route = routes.find((r) => r.method === req.method && r.path.test(url.pathname));
    if (!route)
      return reply(res, 404, { statusCode: 404, message: `Cannot ${req.method} ${url.pathname}`, error: 'Not Found' });
    if (!scopes.has(route.scope))
      return reply(res, 401, {
        statusCode: 401,
        message: 'The token is not authorized for this scope.',
        error: 'Unauthorized',
      });
    if (body !== undefined && req.headers['content-type']?.split(';')[0] !== 'application/json')
      return reply(res, 400, { statusCode: 400, message: 'Content-Type must be application/json' });
    try {
      const params = route.path.exec(url.pathname)!.slice(1).map(decodeURIComponent);
      const [status, answer] = route.answer(body, params);
      if (losing && losing.method === req.method && losing.path.test(url.pathname)) {
        losing = undefined;
        res.socket?.destroy();
        return;
      }
      reply(res, status, answer);
    } catch (err) {
      if (!(err instanceof Refusal)) throw err;
      reply(res, err.status, err.body);
    }
  });

  return {
    url: receiver.url,
    token,
    locationId,
    contacts,
    notes,
    requests,
    addContact: (fields) => {
      const contact = create({});
      Object.assign(contact, fields);
      return contact;
    },
    notesOf,
    rateLimitNext: (count, intervalMs = 10_000) => {
      limited = { count, intervalMs };
    },
    failNext: (count, status) => {
      failing = { count, status };
    },
    revoke: () => {
      revoked = true;
    },
    dropScope: (scope) => {
      scopes.delete(scope);
    },
    loseReply: (method, path) => {
      losing = { method, path };
    },
    close: () => receiver.close(),
  };
}
