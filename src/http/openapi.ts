/**
 * The OpenAPI 3.1 document of the webhook, admin and operating routes, served at `/admin/openapi.json`. The admin
 * routes' parameters and request bodies are generated from the zod schemas the router validates with
 * (admin-schemas.ts); their summaries and replies are written here, one per route of that table.
 */

import { RULE_NAMES } from '../alerts/config.js';
import { AUDIT_ACTIONS } from '../operators/audit.js';
import { ROLES, type Role } from '../operators/roles.js';
import { RECORD_SOURCES } from '../record.js';
import { type AdminRequest, type AdminRouteKey, adminRequests, jsonSchemaOf, parametersOf } from './admin-schemas.js';

const json = (schema: object) => ({ 'application/json': { schema } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const error = (description: string) => ({ description, content: json(ref('Error')) });
const admin = { security: [{ adminToken: [] }] };
const ITEMS: Record<string, string> = {
  calls: 'Call',
  deliveries: 'Delivery',
  receipts: 'Receipt',
  incidents: 'Incident',
};
const page = (item: string, cursor: object) => ({
  type: 'object',
  properties: { [item]: { type: 'array', items: ref(ITEMS[item]!) }, next: cursor },
});

interface Described {
  summary: string;
  /**
   * The role the route needs (docs/reference.md#operators), `x-role` in the document: viewer for every GET but the
   * users' and the audit log's, operator to change calls, deliveries, refused requests, sinks and incidents, admin
   * for users, tokens, erasure and the audit log. The router's guards are checked against it (test/roles.test.ts).
   */
  role?: Role;
  responses: Record<number, object>;
}

const sinkAction = (summary: string): Described => ({
  summary,
  role: 'operator',
  responses: {
    200: { description: 'The sink as it is now', content: json(ref('Sink')) },
    404: error('No sink of that name is configured'),
  },
});

/** What the schemas cannot say of each admin route: what it is for and what it answers. */
const ADMIN_OPERATIONS: Record<AdminRouteKey, Described> = {
  'get /admin/openapi.json': {
    summary: 'This document',
    responses: { 200: { description: 'OpenAPI 3.1', content: json({ type: 'object' }) } },
  },
  'get /admin/calls': {
    summary:
      'List calls, oldest first unless order=desc, with cursor pagination; test traffic (source replay or simulate) only when test_calls=true or source names it',
    responses: {
      200: { description: 'A page of calls', content: json(page('calls', { type: ['string', 'null'] })) },
      400: error('Bad filter'),
      401: error('Missing or wrong admin token'),
    },
  },
  'get /admin/calls/{id}': {
    summary: 'One call with its raw request, receipts, deliveries, attempts and edits',
    responses: { 200: { description: 'The call', content: json(ref('CallDetail')) }, 404: error('No such call') },
  },
  'patch /admin/calls/{id}': {
    role: 'operator',
    summary:
      "Edit a call: change only the fields named, normalised with the hook's parameters as at intake, problems recomputed, a new revision; never redelivers",
    responses: {
      200: {
        description: 'The record as it is now; `edit` is null when no field came out other than it was',
        content: json(ref('EditReply')),
      },
      400: error('Not JSON, no field named, or a field the hook does not declare'),
      404: error('No such call'),
      409: error("The call's hook is no longer configured, or other edits kept coming first"),
    },
  },
  'post /admin/calls/{id}/reviewed': {
    role: 'operator',
    summary:
      'Mark a call with problems as needing no change: it leaves the review queue (a held call once released too); kept in its edits',
    responses: {
      200: {
        description: 'The mark (the one kept already when the call was marked at this revision)',
        content: json({ type: 'object', properties: { record: ref('Record'), edit: ref('CallEdit') } }),
      },
      404: error('No such call'),
      409: error('The call has no problems'),
    },
  },
  'post /admin/calls/{id}/redeliver': {
    role: 'operator',
    summary: 'Send a call again to some or all sinks',
    responses: {
      200: {
        description: 'Scheduled',
        content: json({
          type: 'object',
          properties: {
            id: { type: 'string' },
            sinks: { type: 'array', items: { type: 'string' } },
            scheduled: { type: 'integer' },
          },
        }),
      },
      400: error('Unknown sink, or a sink that takes no test traffic named for a test call'),
      404: error('No such call'),
    },
  },
  'post /admin/calls/{id}/release': {
    role: 'operator',
    summary: 'Release a held call to its sinks',
    responses: { 200: { description: 'Released' }, 404: error('No such call'), 409: error('The call is not held') },
  },
  'get /admin/receipts': {
    summary: 'List receipts: what every authenticated request left behind; outcome=rejected lists the refused requests',
    responses: {
      200: { description: 'A page of receipts', content: json(page('receipts', { type: ['integer', 'null'] })) },
      400: error('Bad filter'),
    },
  },
  'get /admin/receipts/{id}': {
    summary: 'One receipt',
    responses: { 200: { description: 'The receipt', content: json(ref('Receipt')) }, 404: error('No such receipt') },
  },
  'post /admin/receipts/{id}/ingest': {
    role: 'operator',
    summary:
      'Ingest a refused request again, as it came or corrected; the call is stored with source recovered, and the receipt marked with it',
    responses: {
      200: {
        description: 'Stored (or a duplicate of a stored call)',
        content: json({ allOf: [ref('Reply'), { type: 'object', properties: { receipt: { type: 'integer' } } }] }),
      },
      400: error('Still unreadable, as at first'),
      404: error('No such receipt'),
      409: error('Not a refused request, ingested already, or for a hook that stores no calls'),
      413: error('Body over the limit'),
      415: error('Unsupported content type'),
    },
  },
  'get /admin/deliveries': {
    summary: 'List deliveries by state and sink',
    responses: {
      200: { description: 'A page of deliveries', content: json(page('deliveries', { type: ['integer', 'null'] })) },
      400: error('Bad filter'),
    },
  },
  'post /admin/deliveries/retry': {
    role: 'operator',
    summary: 'Retry deliveries in bulk: dead ones by default, narrowed by sink, call or ids',
    responses: {
      200: { description: 'How many', content: json({ type: 'object', properties: { retried: { type: 'integer' } } }) },
    },
  },
  'post /admin/deliveries/{id}/retry': {
    role: 'operator',
    summary: 'Retry one dead delivery',
    responses: { 200: { description: 'Retried' }, 404: error('No such delivery'), 409: error('Not dead') },
  },
  'get /admin/sinks': {
    summary:
      'Every configured sink: paused or not, deliveries by state, oldest pending age, last success and last error',
    responses: {
      200: {
        description: 'The sinks, in config order',
        content: json({ type: 'object', properties: { sinks: { type: 'array', items: ref('Sink') } } }),
      },
    },
  },
  'post /admin/sinks/{name}/pause': sinkAction(
    'Pause a sink for every replica, kept across restarts: its deliveries stay pending and spend no attempt',
  ),
  'post /admin/sinks/{name}/resume': sinkAction('Resume a paused sink: its pending deliveries are due now'),
  'post /admin/sinks/{name}/redeliver': {
    role: 'operator',
    summary:
      "Send the calls received in a period to this sink, those its route takes (its `when`; test traffic only to a sink that takes it), held calls and calls with a delivery to it pending or in flight left out; one already delivered is sent again, under the same idempotency key. Done in the background by a job kept in this serve's memory",
    responses: {
      202: {
        description: 'Started: the job as it starts, to be read at /admin/jobs/{id}',
        content: json({ type: 'object', required: ['job'], properties: { job: ref('Job') } }),
      },
      400: error('Unknown sink (the message names those there are), a bad date, or an empty period'),
    },
  },
  'get /admin/jobs/{id}': {
    summary: 'A background job (a period redelivery) as it is now: its state, how far it is, its errors',
    responses: {
      200: { description: 'The job', content: json(ref('Job')) },
      404: error('No such job: never started by this serve, forgotten, or lost in a restart (jobs live in memory)'),
    },
  },
  'get /admin/incidents': {
    summary:
      "The alerts' incidents, newest first, open or resolved, of one rule, with cursor pagination; each with its messages' delivery states",
    responses: {
      200: { description: 'A page of incidents', content: json(page('incidents', { type: ['string', 'null'] })) },
      400: error('Bad filter'),
    },
  },
  'get /admin/incidents/{id}': {
    summary: 'One incident with its messages',
    responses: {
      200: { description: 'The incident', content: json(ref('Incident')) },
      404: error('No such incident'),
    },
  },
  'post /admin/incidents/{id}/ack': {
    role: 'operator',
    summary:
      'Acknowledge an open incident: it stays open, and who acknowledged it and when are kept, the first acknowledgement only',
    responses: {
      200: { description: 'The incident, acknowledged (by the first to do it)', content: json(ref('Incident')) },
      404: error('No such incident'),
      409: error('The incident is resolved already'),
    },
  },
  'get /admin/people': {
    summary:
      'Everything kept about one person, found by any spelling of their number or by their address: their calls with raw requests, edits, receipts and deliveries, and the other requests whose body held them',
    responses: {
      200: {
        description: 'The person’s data, as one document (nothing_kept: true when there is none)',
        content: json({ type: 'object' }),
      },
      400: error('No person, both a number and an address, or one that cannot be read'),
    },
  },
  'post /admin/erase': {
    role: 'admin',
    summary:
      'Erases everything kept about one person, of every hook, and their copies in the sinks that can erase; lists the sinks that cannot, with the record ids they received. The erasure log keeps a keyed hash of the person, never the person',
    responses: {
      200: {
        description: 'What was erased (or, in a dry run, would be), by kind and by sink',
        content: json({ type: 'object' }),
      },
      400: error('No person, both a number and an address, or one that cannot be read'),
    },
  },
  'get /admin/erasures': {
    summary: 'Whether, and when, a person was erased, from the erasure log',
    responses: {
      200: { description: 'The erasures of the person, oldest first', content: json({ type: 'object' }) },
      400: error('No person, both a number and an address, or one that cannot be read'),
    },
  },
  'get /admin/users': {
    summary:
      'The users, oldest first, each with their role and personal tokens (name, created, last used; never the token)',
    role: 'admin',
    responses: {
      200: {
        description: 'The users',
        content: json({ type: 'object', properties: { users: { type: 'array', items: ref('User') } } }),
      },
    },
  },
  'post /admin/users': {
    summary:
      'Add a user with a role, and a password or, without one, a one-time link to set it (valid 24 hours, shown this once)',
    role: 'admin',
    responses: {
      201: {
        description: 'The user, and the link when no password was given',
        content: json({
          type: 'object',
          required: ['user'],
          properties: { user: ref('User'), link: ref('PasswordLink') },
        }),
      },
      400: error('An address that cannot be one, an unknown role, a password shorter than 12 characters'),
      409: error('A user with that address exists already'),
    },
  },
  'patch /admin/users/{email}': {
    summary: 'Give a user another role; their dashboard sessions end on every replica',
    role: 'admin',
    responses: {
      200: { description: 'The user as they are now', content: json(ref('User')) },
      400: error('An unknown role'),
      404: error('No such user'),
      409: error('It would leave no admin user while no admin token is configured'),
    },
  },
  'delete /admin/users/{email}': {
    summary: 'Remove a user with their tokens and sessions: each is refused from the next request on',
    role: 'admin',
    responses: {
      204: { description: 'Removed' },
      404: error('No such user'),
      409: error('It would leave no admin user while no admin token is configured'),
    },
  },
  'post /admin/users/{email}/reset': {
    summary: "Clear a user's password, end their sessions, and make a new one-time link (shown this once)",
    role: 'admin',
    responses: {
      200: {
        description: 'The user and the link',
        content: json({
          type: 'object',
          required: ['user', 'link'],
          properties: { user: ref('User'), link: ref('PasswordLink') },
        }),
      },
      404: error('No such user'),
    },
  },
  'post /admin/users/{email}/tokens': {
    summary:
      "Make a personal token for /admin with the user's role (as it is at each request): shown this once, kept hashed",
    role: 'admin',
    responses: {
      201: {
        description: 'The token, and what GET /admin/users will list of it',
        content: json({
          type: 'object',
          required: ['token', 'info'],
          properties: { token: { type: 'string', description: 'chk_…, shown this once' }, info: ref('Token') },
        }),
      },
      400: error('A name that is empty, too long or holds a control character'),
      404: error('No such user'),
    },
  },
  'delete /admin/tokens/{id}': {
    summary: 'Revoke a personal token: it is refused from the next request on',
    role: 'admin',
    responses: { 204: { description: 'Revoked' }, 404: error('No such token') },
  },
  'get /admin/audit': {
    summary:
      'The audit log, newest first, a page at a time: every change, sign-in and refusal of a role, with who, when, from which address, what it touched and the outcome',
    role: 'admin',
    responses: {
      200: {
        description: 'A page of entries; `next` is the `before` of the next (older) page',
        content: json({
          type: 'object',
          properties: { entries: { type: 'array', items: ref('AuditEntry') }, next: { type: ['integer', 'null'] } },
        }),
      },
      400: error('A bad filter'),
    },
  },
};

/** The admin paths: each route of the table, its parameters and body from its schemas, its words from above. */
function adminPaths(): Record<string, Record<string, object>> {
  const paths: Record<string, Record<string, object>> = {};
  for (const [key, request] of Object.entries(adminRequests) as [AdminRouteKey, AdminRequest][]) {
    const [method, path] = key.split(' ') as [string, string];
    const parameters = parametersOf(request);
    const body = request.body && {
      requestBody: { ...(request.bodyRequired ? { required: true } : {}), content: json(jsonSchemaOf(request.body)) },
    };
    const { summary, role = 'viewer', responses } = ADMIN_OPERATIONS[key];
    (paths[path] ??= {})[method] = {
      ...admin,
      summary,
      'x-role': role,
      ...(parameters.length > 0 ? { parameters } : {}),
      ...body,
      responses: {
        ...responses,
        ...(role === 'viewer' ? {} : { 403: error(`Needs the ${role} role; nothing was changed`) }),
      },
    };
  }
  return paths;
}

export function openApiDocument(hooks: readonly string[]): object {
  const webhook = (method: string) => ({
    summary: `Receive a call (${method})`,
    description:
      method === 'get' || method === 'delete'
        ? 'Parameters in the query string only.'
        : 'Body as JSON, form-urlencoded or multipart; query parameters fill fields the body lacks.',
    security: [{ webhookKey: [] }],
    parameters: [{ name: 'hook', in: 'path', required: true, schema: { type: 'string', enum: [...hooks] } }],
    ...(method === 'post' || method === 'put'
      ? {
          requestBody: {
            content: {
              'application/json': { schema: { type: 'object', additionalProperties: true } },
              'application/x-www-form-urlencoded': {
                schema: { type: 'object', additionalProperties: { type: 'string' } },
              },
              'multipart/form-data': { schema: { type: 'object', additionalProperties: { type: 'string' } } },
            },
          },
        }
      : {}),
    responses: {
      200: {
        description:
          "End-of-call hook: committed (accepted, held, or a duplicate of an earlier call). In-call hook: the caller's history, or its handler's JSON",
        content: json({ oneOf: [ref('Reply'), ref('CallerHistory')] }),
      },
      400: error('The body or query cannot be parsed'),
      401: error('Missing or wrong bearer key'),
      404: error('Unknown hook'),
      405: error('Method not allowed'),
      413: error('Body over the limit'),
      415: error('Unsupported content type or a file part'),
      502: error('In-call hook: its handler failed'),
      503: error('The store cannot commit; nothing was stored'),
      504: error('In-call hook: its handler did not answer in time'),
    },
  });

  return {
    openapi: '3.1.0',
    info: {
      title: 'callhook',
      version: '1',
      description: 'Receiver of AI voice-call webhooks: intake, admin and operating routes.',
    },
    paths: {
      '/webhooks/{hook}': {
        post: webhook('post'),
        put: webhook('put'),
        get: webhook('get'),
        delete: webhook('delete'),
      },
      '/healthz': { get: { summary: 'The process runs', responses: { 200: { description: 'Alive' } } } },
      '/readyz': {
        get: {
          summary: 'Store commits and delivery runs',
          responses: { 200: { description: 'Ready' }, 503: error('Not ready, with the failing check') },
        },
      },
      '/metrics': {
        get: {
          summary: 'Prometheus text',
          responses: { 200: { description: 'Metrics', content: { 'text/plain': { schema: { type: 'string' } } } } },
        },
      },
      ...adminPaths(),
    },
    components: {
      securitySchemes: {
        webhookKey: { type: 'http', scheme: 'bearer', description: 'A key of CALLHOOK_API_KEYS or the hook' },
        adminToken: {
          type: 'http',
          scheme: 'bearer',
          description: "CALLHOOK_ADMIN_TOKEN (an admin), or a user's personal token (chk_…, the user's role)",
        },
      },
      schemas: {
        Error: {
          type: 'object',
          required: ['error', 'message'],
          properties: { error: { type: 'integer' }, message: { type: 'string' } },
        },
        Problem: {
          type: 'object',
          properties: {
            field: { type: 'string' },
            code: { enum: ['missing_required', 'invalid_type', 'invalid_format'] },
            message: { type: 'string' },
            value: { description: 'The value as received (invalid_type, invalid_format)' },
          },
        },
        Reply: {
          type: 'object',
          required: ['status', 'id', 'dedup_key'],
          properties: {
            status: { enum: ['accepted', 'duplicate', 'held'] },
            id: { type: 'string' },
            dedup_key: {
              type: ['string', 'null'],
              description: 'null for a call none of whose declared parameters has a value: never a duplicate',
            },
            conflicts_with: {
              type: 'string',
              description: 'The stored call with the same dedup key and other content',
            },
            problems: { type: 'array', items: ref('Problem') },
          },
        },
        Receipt: {
          type: 'object',
          properties: {
            id: { type: 'integer' },
            hook: { type: 'string' },
            callId: { type: ['string', 'null'] },
            receivedAt: { type: 'string', format: 'date-time' },
            method: { type: 'string' },
            contentType: { type: ['string', 'null'] },
            size: { type: 'integer' },
            status: { type: 'integer' },
            outcome: { enum: ['accepted', 'held', 'duplicate', 'rejected', 'in-call', 'ignored'] },
            error: { type: ['string', 'null'] },
            rawBody: { type: 'string', description: "A refused request's or a duplicate's body, as text" },
            rawBodyBase64: { type: 'string', description: 'The same, for bytes that are not UTF-8' },
            query: { type: ['string', 'null'] },
            ingestedAs: { type: ['string', 'null'], description: 'The call a refused request was ingested as' },
          },
        },
        CallerHistory: {
          type: 'object',
          description: "An in-call hook's answer: the caller's earlier calls by phone number, newest first",
          required: [
            'phone_number',
            'count',
            'last_call_date',
            'last_outcome',
            'last_sentiment',
            'last_summary',
            'open_order_ids',
            'calls',
          ],
          properties: {
            phone_number: { type: ['string', 'null'] },
            count: { type: 'integer' },
            last_call_date: { type: ['string', 'null'] },
            last_outcome: { type: ['string', 'null'] },
            last_sentiment: { type: ['string', 'null'] },
            last_summary: { type: ['string', 'null'] },
            open_order_ids: {
              type: 'array',
              items: { type: 'string' },
              description:
                "The caller's order ids, newest first, but for those whose newest call's outcome closes them (cancel, deliver, refund, return, complete)",
            },
            calls: { type: 'array', maxItems: 5, items: ref('HistoryCall') },
            problems: {
              type: 'array',
              items: ref('Problem'),
              description: 'Present when the request named no usable phone number; count is then 0',
            },
          },
        },
        HistoryCall: {
          type: 'object',
          required: ['id', 'received_at', 'call_date', 'outcome', 'sentiment', 'summary', 'order_id'],
          properties: {
            id: { type: 'string' },
            received_at: { type: 'string', format: 'date-time' },
            call_date: { type: ['string', 'null'], format: 'date' },
            outcome: { type: ['string', 'null'] },
            sentiment: { type: ['string', 'null'] },
            summary: { type: ['string', 'null'] },
            order_id: { type: ['string', 'null'] },
          },
        },
        Record: {
          type: 'object',
          properties: {
            id: { type: 'string' },
            hook: { type: 'string' },
            dedup_key: { type: ['string', 'null'] },
            received_at: { type: 'string', format: 'date-time' },
            source: { enum: [...RECORD_SOURCES] },
            revision: { type: 'integer' },
            conflicts_with: { type: 'string' },
            data: { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean'] } },
            extra: { type: 'object', additionalProperties: true },
            problems: { type: 'array', items: ref('Problem') },
          },
        },
        Call: {
          type: 'object',
          properties: {
            record: ref('Record'),
            status: { enum: ['accepted', 'held'] },
            duplicates: { type: 'integer' },
            raw: {
              type: 'object',
              description: 'The request as received: method, content_type, query, body',
              properties: {
                retention: {
                  type: 'object',
                  description: 'What the retention removed: `dropped` (when body and query went), `fields`',
                  properties: { dropped: { type: 'string' }, fields: { type: 'array', items: { type: 'string' } } },
                },
              },
            },
          },
        },
        Delivery: {
          type: 'object',
          properties: {
            id: { type: 'integer' },
            callId: { type: 'string' },
            sink: { type: 'string' },
            state: { enum: ['pending', 'in_flight', 'done', 'dead'] },
            attempts: { type: 'integer' },
            nextAttemptAt: { type: 'integer' },
            lastError: { type: ['string', 'null'] },
            updatedAt: { type: 'integer' },
          },
        },
        Sink: {
          type: 'object',
          required: [
            'name',
            'type',
            'state',
            'paused',
            'deliveries',
            'oldest_pending_age_seconds',
            'last_success_at',
            'last_error',
            'failing',
          ],
          properties: {
            name: { type: 'string' },
            type: { type: 'string' },
            state: {
              enum: ['paused', 'rate_limited', 'failing', 'running'],
              description:
                'What the sink does now, the first that holds: paused, waiting out a 429, failing (its last error is newer than its last success), else running',
            },
            paused: { type: 'boolean' },
            paused_by: {
              enum: ['operator', 'config'],
              description: "An operator's pause or resume, kept in the store, wins over the config's `paused`",
            },
            paused_changed_at: {
              type: ['string', 'null'],
              format: 'date-time',
              description: 'When an operator last paused or resumed it',
            },
            rate_limited_until: {
              type: ['string', 'null'],
              format: 'date-time',
              description: 'A 429 holds every delivery of the sink until then',
            },
            deliveries: {
              type: 'object',
              properties: {
                pending: { type: 'integer' },
                in_flight: { type: 'integer' },
                done: { type: 'integer' },
                dead: { type: 'integer' },
              },
            },
            oldest_pending_age_seconds: { type: 'number' },
            last_success_at: {
              type: ['string', 'null'],
              format: 'date-time',
              description: 'Written at most once a second',
            },
            last_error: {
              type: ['string', 'null'],
              description:
                'Why the last failed attempt, or opening the sink at start-up, failed; history when older than last_success_at',
            },
            last_error_at: { type: ['string', 'null'], format: 'date-time' },
            failing: {
              type: 'boolean',
              description:
                'Whether last_error is newer than last_success_at: a failure older than the last success is history',
            },
          },
        },
        Job: {
          type: 'object',
          required: ['id', 'kind', 'state', 'started_at', 'finished_at', 'errors'],
          properties: {
            id: { type: 'string' },
            kind: { const: 'redeliver' },
            state: {
              enum: ['running', 'done', 'failed', 'stopped'],
              description: 'stopped: serve shut down while it ran; failed: it gave up, errors say why',
            },
            started_at: { type: 'string', format: 'date-time' },
            finished_at: { type: ['string', 'null'], format: 'date-time' },
            errors: { type: 'array', items: { type: 'string' }, description: 'Each failure met, retried or not' },
            sink: { type: 'string' },
            from: { type: 'string', format: 'date-time', description: 'The period, from (included)' },
            to: { type: 'string', format: 'date-time', description: 'to (excluded); never past the job start' },
            dry_run: { type: 'boolean' },
            total: {
              type: ['integer', 'null'],
              description: 'Calls received in the period, counted as the job starts',
            },
            done: { type: 'integer', description: 'Calls looked at so far' },
            queued: { type: 'integer', description: 'Deliveries made pending (a dry run: that would be)' },
            skipped: {
              type: 'object',
              properties: {
                held: { type: 'integer' },
                not_for_sink: { type: 'integer', description: "Calls the sink's route does not take" },
                pending: { type: 'integer', description: 'Calls whose delivery to the sink is pending or in flight' },
              },
            },
          },
        },
        Incident: {
          type: 'object',
          required: [
            'id',
            'rule',
            'key',
            'state',
            'summary',
            'opened_at',
            'last_event',
            'acknowledged_at',
            'acknowledged_by',
            'resolved_at',
            'counts',
            'messages',
          ],
          properties: {
            id: { type: 'string' },
            rule: { enum: [...RULE_NAMES] },
            key: {
              type: ['string', 'null'],
              description: 'The sink or hook it is about; null for a rule with one incident at a time',
            },
            state: { enum: ['open', 'resolved'] },
            summary: { type: 'string', description: "One line of names and counts, never a caller's data" },
            opened_at: { type: 'string', format: 'date-time' },
            last_event: { type: 'string', format: 'date-time', description: 'The last occurrence counted in it' },
            acknowledged_at: { type: ['string', 'null'], format: 'date-time' },
            acknowledged_by: {
              type: ['string', 'null'],
              description:
                'Who acknowledged it: `admin-token` for the admin token and a dashboard session made with it',
            },
            resolved_at: { type: ['string', 'null'], format: 'date-time' },
            counts: {
              type: 'object',
              additionalProperties: { type: 'integer' },
              description: 'What it counted while open',
            },
            messages: { type: 'array', items: ref('AlertMessage'), description: 'Oldest first' },
          },
        },
        AlertMessage: {
          type: 'object',
          required: ['channel', 'kind', 'state', 'attempts', 'last_error', 'updated_at'],
          properties: {
            channel: { type: 'string' },
            kind: { enum: ['opened', 'resolved'] },
            state: {
              enum: ['pending', 'in_flight', 'done', 'dead'],
              description: 'dead: given up on; shown here, and raises no incident',
            },
            attempts: { type: 'integer' },
            last_error: { type: ['string', 'null'] },
            updated_at: { type: 'string', format: 'date-time' },
          },
        },
        CallDetail: {
          allOf: [
            ref('Call'),
            {
              type: 'object',
              properties: {
                receipts: { type: 'array', items: ref('Receipt') },
                deliveries: { type: 'array', items: ref('Delivery') },
                attempts: { type: 'array', items: { type: 'object' } },
                edits: { type: 'array', items: ref('CallEdit'), description: 'Edits and review marks, oldest first' },
              },
            },
          ],
        },
        CallEdit: {
          type: 'object',
          required: ['at', 'fields', 'revision'],
          properties: {
            at: { type: 'string', format: 'date-time' },
            fields: {
              type: 'object',
              description:
                'Each field changed: `before` is its value in data, or as received while it had a problem, absent when it had none; `after` likewise',
              additionalProperties: { type: 'object', properties: { before: {}, after: {} } },
            },
            revision: {
              type: 'integer',
              description: 'The revision the edit made, or the one a review mark was given at',
            },
            reviewed: { const: true, description: 'A review mark: no change, the call leaves the review queue' },
            by: {
              type: 'string',
              description: "Who made it: a user's address or admin-token; absent from edits made before users",
            },
          },
        },
        User: {
          type: 'object',
          required: ['email', 'role', 'created_at', 'updated_at', 'password_set', 'tokens'],
          properties: {
            email: { type: 'string' },
            role: { enum: [...ROLES] },
            created_at: { type: 'string', format: 'date-time' },
            updated_at: { type: 'string', format: 'date-time' },
            password_set: { type: 'boolean', description: 'false until the user sets a password through their link' },
            tokens: { type: 'array', items: ref('Token') },
          },
        },
        Token: {
          type: 'object',
          required: ['id', 'name', 'created_at', 'last_used_at'],
          properties: {
            id: { type: 'string' },
            name: { type: 'string' },
            created_at: { type: 'string', format: 'date-time' },
            last_used_at: {
              type: ['string', 'null'],
              format: 'date-time',
              description: 'Written at most once a minute',
            },
          },
        },
        PasswordLink: {
          type: 'object',
          required: ['url', 'expires_at'],
          properties: {
            url: { type: 'string', description: '<origin>/ui/password/<secret>: works once' },
            expires_at: { type: 'string', format: 'date-time' },
          },
        },
        AuditEntry: {
          type: 'object',
          required: ['id', 'at', 'actor', 'address', 'action', 'target', 'outcome', 'details'],
          properties: {
            id: { type: 'integer' },
            at: { type: 'string', format: 'date-time' },
            actor: {
              type: 'string',
              description: "A user's address, admin-token, cli, or the address a sign-in tried",
            },
            address: { type: ['string', 'null'], description: "The client's address" },
            action: { enum: [...AUDIT_ACTIONS] },
            target: { type: ['string', 'null'] },
            outcome: { type: 'string', description: 'ok, or the error code it ended with' },
            details: {
              type: ['object', 'null'],
              description: 'Field names of an edit, counts, a role, a token name: never a value typed or a secret',
            },
          },
        },
        EditReply: {
          type: 'object',
          required: ['record', 'problems', 'edit'],
          properties: {
            record: ref('Record'),
            problems: { type: 'array', items: ref('Problem') },
            edit: { oneOf: [ref('CallEdit'), { type: 'null' }] },
          },
        },
      },
    },
  };
}
