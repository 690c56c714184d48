import type { Fixture } from '../cli/fixtures.js';
import { pick, seeded, syntheticCall } from './generate.js';

/**
 * The requests of one simulated run, decided before the first is sent: which calls, with which method and
 * encoding, and which sends repeat an earlier call. Planning apart from sending keeps a seeded run repeatable
 * whatever the receiver answers, and lets a test know the calls a run will make.
 */

export const ENCODINGS = ['json', 'form', 'multipart'] as const;
export const METHODS = ['POST', 'PUT', 'GET', 'DELETE'] as const;
export type Encoding = (typeof ENCODINGS)[number];
export type Method = (typeof METHODS)[number];

export interface PlanOptions {
  count: number;
  /** Share of the sends that repeat an earlier call's request exactly. */
  duplicates: number;
  /** Each value's chance of being "" (the AI could not find it). */
  empty: number;
  encodings: readonly Encoding[];
  methods: readonly Method[];
  /** Configured headers and query parameters, sent with every request (spec 6.2). */
  headers?: Record<string, string>;
  query?: Record<string, string>;
  hook?: string;
  seed?: number;
  /** The day the run's calls end on, `YYYY-MM-DD`; today (UTC) unless given. */
  today?: string;
}

export interface Planned {
  callId: string;
  method: Method;
  /** `query` for GET and DELETE, whose fields all travel in the query string. */
  encoding: Encoding | 'query';
  /** The request in the fixture shape, so `buildRequest` sends it exactly as `callhook replay` would. */
  fixture: Fixture;
  /** A send of an earlier call's request again, byte for byte (the same fixture). */
  repeat: boolean;
}

/** Repeats are drawn from the latest sends: a run of millions keeps no more than these in memory. */
const REPEAT_WINDOW = 10_000;

/** The requests of a run, in order: new calls, and at the chosen rate exact repeats of earlier ones. */
export function plan(options: PlanOptions): Planned[] {
  return [...planRequests(options)];
}

/** The same requests one at a time, each made when the sender is about to send it. */
export function* planRequests({
  count,
  duplicates,
  empty,
  encodings,
  methods,
  headers = {},
  query = {},
  hook = 'end-of-call',
  seed = Date.now() % 2 ** 31,
  today = new Date().toISOString().slice(0, 10),
}: PlanOptions): Generator<Planned> {
  if (encodings.length === 0) throw new Error('simulate needs at least one encoding');
  if (methods.length === 0) throw new Error('simulate needs at least one method');
  const random = seeded(seed);
  const run = seed.toString(36);
  const recent: Planned[] = [];
  for (let sent = 0, n = 0; sent < count; sent++) {
    let next: Planned;
    if (sent > 0 && random() < duplicates) {
      next = { ...pick(random, recent), repeat: true };
    } else {
      const fields = syntheticCall(random, n++, { empty, run, today });
      const method = pick(random, methods);
      // Spec 6.3 rule 3: GET and DELETE carry no body; their parameters travel in the query string.
      const bodyless = method === 'GET' || method === 'DELETE';
      const encoding = bodyless ? 'query' : pick(random, encodings);
      const fieldsAsText = bodyless ? Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, String(v)])) : {};
      next = {
        callId: String(fields.call_id),
        method,
        encoding,
        fixture: {
          description: `simulated call ${fields.call_id}`,
          request: {
            method,
            hook,
            encoding,
            headers: { ...headers },
            query: { ...query, ...fieldsAsText },
            body: bodyless ? undefined : fields,
          },
          expect: { status: 200 },
        },
        repeat: false,
      };
    }
    if (recent.length < REPEAT_WINDOW) recent.push(next);
    else recent[sent % REPEAT_WINDOW] = next;
    yield next;
  }
}
