import { SOURCE_HEADER } from '../intake/parse/request-fields.js';
import { buildRequest, type Fixture, matches, newRunId, withRunId } from './fixtures.js';
import { fixturesToReplay } from './platform-fixtures.js';
import type { Signer, SignerChoice } from './platform-signer.js';

/**
 * `callhook replay <file or dir>…`: sends fixtures as the calling service would, or as the voice platform whose
 * fixtures they are, signed afresh (platform-fixtures.ts), and compares each reply with the fixture's `expect`. With an
 * admin token it also reads the stored record back and compares its data.
 */

export interface ReplayOptions extends SignerChoice {
  url: string;
  key?: string;
  adminToken?: string;
  hook?: string;
  /** 10 s, as the sender waits (spec section 6.3 rule 8). */
  timeoutMs?: number;
  /** Where each line of the report goes: the command's stdout. */
  print: (line: string) => void;
}

export interface ReplayResult {
  file: string;
  ok: boolean;
  status: number;
  reply: unknown;
  failures: string[];
}

export async function replay(paths: readonly string[], options: ReplayOptions): Promise<ReplayResult[]> {
  const { print } = options;
  const run = newRunId();
  const results: ReplayResult[] = [];
  const { fixtures, skipped } = fixturesToReplay(paths, options);
  for (const line of skipped) print(line);
  if (!options.adminToken && fixtures.some(({ fixture }) => fixture.expect.data || fixture.expect.extra)) {
    print('note: no admin token, so stored data and extra are not compared (pass --admin-token)');
  }
  for (const { file, fixture: template, signer } of fixtures) {
    const fixture = withRunId(template, run);
    const result = await replayOne(file, fixture, options, signer);
    results.push(result);
    // Each reply whole (docs/reference.md#command-line), on the line of its file.
    const reply =
      result.reply === undefined
        ? ''
        : typeof result.reply === 'string'
          ? result.reply.slice(0, 200)
          : JSON.stringify(result.reply);
    print(`${result.ok ? 'ok  ' : 'FAIL'} ${file}  ${result.status} ${reply}`.trimEnd());
    for (const failure of result.failures) print(`       ${failure}`);
  }
  const failed = results.filter((r) => !r.ok).length;
  print(`${results.length - failed} passed, ${failed} failed`);
  return results;
}

export async function replayOne(
  file: string,
  fixture: Fixture,
  options: ReplayOptions,
  signer?: Signer,
): Promise<ReplayResult> {
  // A platform signs its requests: no webhook key goes with them.
  const { url, init } = buildRequest(fixture, options.url, signer ? undefined : options.key, options.hook);
  // What it stores says `source: replay`, unless the fixture sends the header itself.
  if (!init.headers.has(SOURCE_HEADER)) init.headers.set(SOURCE_HEADER, 'replay');
  const failures: string[] = [];
  if (signer) {
    const body = init.body ?? '';
    if (typeof body !== 'string') {
      failures.push(
        `a ${signer.platform.name} fixture's body is JSON text: body with encoding json, or raw_body as text`,
      );
      return { file, ok: false, status: 0, reply: undefined, failures };
    }
    // Signed now, as the platform signs at the moment it sends; a header the fixture sets itself wins (a wrong one).
    const signed = signer.platform.sign(body, signer.secret, signer.options, Date.now());
    for (const [name, value] of Object.entries(signed)) if (!init.headers.has(name)) init.headers.set(name, value);
  }
  let status = 0;
  let reply: unknown;
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(options.timeoutMs ?? 10_000) });
    status = res.status;
    const text = await res.text();
    try {
      reply = JSON.parse(text);
    } catch {
      reply = text;
      failures.push(`reply is not JSON: ${text.slice(0, 200)}`);
    }
  } catch (err) {
    failures.push(`no reply: ${(err as Error).message}`);
    return { file, ok: false, status, reply, failures };
  }

  const { expect } = fixture;
  if (status !== expect.status)
    failures.push(`status: expected ${expect.status}, got ${status} ${JSON.stringify(reply)}`);
  if (expect.reply && !matches(expect.reply, reply))
    failures.push(`reply: expected ${JSON.stringify(expect.reply)} within ${JSON.stringify(reply)}`);
  const replied = reply as { problems?: unknown; id?: unknown };
  if (expect.problems && !matches(expect.problems, replied.problems)) {
    failures.push(`problems: expected ${JSON.stringify(expect.problems)}, got ${JSON.stringify(replied.problems)}`);
  }
  if ((expect.data || expect.extra) && status === 200 && options.adminToken && typeof replied.id === 'string') {
    failures.push(...(await compareStored(options, replied.id, fixture)));
  }
  return { file, ok: failures.length === 0, status, reply, failures };
}

async function compareStored(options: ReplayOptions, id: string, fixture: Fixture): Promise<string[]> {
  const res = await fetch(
    new URL(`admin/calls/${encodeURIComponent(id)}`, options.url.endsWith('/') ? options.url : `${options.url}/`),
    {
      headers: { authorization: `Bearer ${options.adminToken}` },
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
    },
  );
  if (!res.ok) return [`cannot read call ${id} back: ${res.status} ${await res.text()}`];
  const { record } = (await res.json()) as { record: { data: unknown; extra: unknown } };
  const failures: string[] = [];
  const same = (a: unknown, b: unknown) => matches(a, b) && matches(b, a);
  if (fixture.expect.data && !same(fixture.expect.data, record.data)) {
    failures.push(`data: expected ${JSON.stringify(fixture.expect.data)}, stored ${JSON.stringify(record.data)}`);
  }
  if (fixture.expect.extra && !same(fixture.expect.extra, record.extra)) {
    failures.push(`extra: expected ${JSON.stringify(fixture.expect.extra)}, stored ${JSON.stringify(record.extra)}`);
  }
  return failures;
}
