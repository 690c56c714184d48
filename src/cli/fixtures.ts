import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { z } from 'zod';

/**
 * Fixture files (docs/reference.md#fixtures): one request as the calling service sends it, and what the receiver must
 * answer. Read by `callhook replay` and by the test suite, so both send exactly the same bytes.
 */

const rawBodySchema = z.union([
  z.string(),
  z.strictObject({ base64: z.string() }),
  /** A large body without a large file: `repeat` written `count` times. */
  z.strictObject({ repeat: z.string().min(1), count: z.number().int().positive() }),
]);

export const fixtureSchema = z.strictObject({
  description: z.string(),
  request: z.strictObject({
    method: z.string().min(1),
    hook: z.string().min(1).default('end-of-call'),
    encoding: z.enum(['json', 'form', 'multipart', 'query']).optional(),
    headers: z.record(z.string(), z.string()).default({}),
    query: z.record(z.string(), z.union([z.string(), z.array(z.string())])).default({}),
    body: z.record(z.string(), z.unknown()).optional(),
    raw_body: rawBodySchema.optional(),
    /** Multipart file parts, for the cases that send one. */
    files: z
      .array(z.strictObject({ field: z.string(), filename: z.string(), content_type: z.string(), content: z.string() }))
      .optional(),
  }),
  expect: z.strictObject({
    status: z.number().int(),
    reply: z.record(z.string(), z.unknown()).optional(),
    data: z.record(z.string(), z.unknown()).optional(),
    extra: z.record(z.string(), z.unknown()).optional(),
    problems: z.array(z.record(z.string(), z.unknown())).optional(),
  }),
});

export type Fixture = z.infer<typeof fixtureSchema>;

export interface LoadedFixture {
  file: string;
  fixture: Fixture;
}

/** Files and directories (their `.json` files, sorted by name: a duplicate follows its original). */
export function loadFixtures(paths: readonly string[]): LoadedFixture[] {
  const files = paths.flatMap((p) =>
    statSync(p).isDirectory()
      ? readdirSync(p)
          .filter((f) => extname(f) === '.json')
          .sort()
          .map((f) => join(p, f))
      : [p],
  );
  return files.map((file) => {
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      throw new Error(`${file}: ${(err as Error).message}`, { cause: err });
    }
    const parsed = fixtureSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new Error(`${file}: ${issue.path.join('.') || '(top level)'}: ${issue.message}`);
    }
    return { file, fixture: withOriginalObjects(parsed.data, json as Fixture) };
  });
}

/**
 * zod's record schema drops an own `__proto__` key (to keep the prototype safe), but a fixture may send one on
 * purpose: the bodies and expectations are kept exactly as JSON.parse read them, after validation.
 */
function withOriginalObjects(fixture: Fixture, original: Fixture): Fixture {
  return {
    ...fixture,
    request: { ...fixture.request, ...(original.request.body && { body: original.request.body }) },
    expect: {
      ...fixture.expect,
      ...(original.expect.reply && { reply: original.expect.reply }),
      ...(original.expect.data && { data: original.expect.data }),
      ...(original.expect.extra && { extra: original.expect.extra }),
    },
  };
}

/** A token unique to one replay run; `{{run}}` in a fixture becomes it, so a second run is not all duplicates. */
export function newRunId(): string {
  return randomBytes(4).toString('hex');
}

/** Replaces `{{run}}` in every string of a value. */
export function withRunId<T>(value: T, run: string): T {
  return JSON.parse(JSON.stringify(value).replaceAll('{{run}}', run)) as T;
}

export interface FixtureRequest {
  url: string;
  init: RequestInit & { method: string; headers: Headers };
}

/**
 * Builds the request the calling service would send (spec section 6.3): the configured method, headers and
 * query parameters, the body serialised by its encoding, none for GET and DELETE. An `Authorization` header in
 * the fixture wins over `key`; an empty one sends none.
 */
export function buildRequest(
  fixture: Fixture,
  baseUrl: string,
  key: string | undefined,
  hook = fixture.request.hook,
): FixtureRequest {
  const { method, encoding, query, body, raw_body, files } = fixture.request;
  const url = new URL(`webhooks/${encodeURIComponent(hook)}`, baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
  for (const [k, v] of Object.entries(query)) for (const one of [v].flat()) url.searchParams.append(k, one);

  const headers = new Headers(fixture.request.headers);
  if (!headers.has('authorization') && key) headers.set('authorization', `Bearer ${key}`);
  if (headers.get('authorization') === '') headers.delete('authorization');

  let payload: RequestInit['body'];
  if (raw_body !== undefined) payload = rawBytes(raw_body);
  else if (body !== undefined && encoding === 'json') {
    payload = JSON.stringify(body);
    if (!headers.has('content-type')) headers.set('content-type', 'application/json');
  } else if (body !== undefined && encoding === 'form') {
    payload = new URLSearchParams(
      Object.entries(body).flatMap(([k, v]) => [v].flat().map((one): [string, string] => [k, asText(one)])),
    ).toString();
    if (!headers.has('content-type')) headers.set('content-type', 'application/x-www-form-urlencoded');
  } else if (body !== undefined && encoding === 'multipart') {
    const form = new FormData();
    for (const [k, v] of Object.entries(body)) for (const one of [v].flat()) form.append(k, asText(one));
    for (const f of files ?? []) form.append(f.field, new Blob([f.content], { type: f.content_type }), f.filename);
    payload = form;
    // Only fetch knows the boundary it writes: a configured multipart Content-Type without it would be unreadable.
    headers.delete('content-type');
  }
  return { url: url.toString(), init: { method, headers, body: payload } };
}

function asText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function rawBytes(raw: z.infer<typeof rawBodySchema>): Uint8Array | string {
  if (typeof raw === 'string') return raw;
  if ('base64' in raw) return new Uint8Array(Buffer.from(raw.base64, 'base64'));
  return raw.repeat.repeat(raw.count);
}

/** True when `actual` holds every key of `expected` with a deeply equal value (extra keys are allowed). */
export function matches(expected: unknown, actual: unknown): boolean {
  if (expected === null || typeof expected !== 'object') return Object.is(expected, actual);
  if (actual === null || typeof actual !== 'object') return false;
  if (Array.isArray(expected)) {
    return (
      Array.isArray(actual) && expected.length === actual.length && expected.every((e, i) => matches(e, actual[i]))
    );
  }
  return Object.entries(expected).every(
    ([k, v]) => Object.hasOwn(actual, k) && matches(v, (actual as Record<string, unknown>)[k]),
  );
}
