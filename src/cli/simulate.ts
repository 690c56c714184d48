import { Command } from 'commander';
import { ENCODINGS, type Encoding, METHODS } from '../simulate/plan.js';
import { simulatePlatform } from '../simulate/platform-sender.js';
import { simulate, target } from '../simulate/simulate.js';
import type { SimulateSummary } from '../simulate/summary.js';
import { commandConfig, positive, progressLine, webhookKey } from './context.js';
import { type CommandIo, ExitCode } from './io.js';
import { collectOption, platformHooks, platformNamed, signerFor } from './platform-signer.js';

interface Options {
  count: string;
  rate: string;
  duplicates: string;
  empty: string;
  encoding: string;
  method: string;
  header: string[];
  query: string[];
  url?: string;
  hook?: string;
  key?: string;
  seed?: string;
  timeoutMs: string;
  json?: boolean;
  config?: string;
  platform?: string;
  secret?: string;
  option: [string, string][];
}

/** `callhook simulate`: the calling service's sender, played against a receiver (spec 6.3). */
export function simulateCommand(io: CommandIo): Command {
  return new Command('simulate')
    .description(
      'play the calling service: synthetic calls, encodings mixed, "" for missing values, 10 s time-out, no retries',
    )
    .option('--count <n>', 'requests to send', '100')
    .option('--rate <r>', 'requests started per second', '20')
    .option('--duplicates <p>', 'share of requests that repeat an earlier call exactly (0 to 1)', '0.05')
    .option('--empty <p>', 'chance of each value being sent as "" (0 to 1)', '0.1')
    .option('--encoding <e>', `body encoding of POST and PUT: ${ENCODINGS.join(', ')} or mixed`, 'mixed')
    .option('--method <m>', `HTTP method: ${METHODS.join(', ')} or mixed (all four)`, 'POST')
    .option('--header <header>', "a configured header, 'Name: value' (repeatable)", collect, [])
    .option('--query <pair>', 'a configured query parameter, key=value (repeatable)', collect, [])
    .option(
      '--url <url>',
      'the receiver: a base URL or a full webhook URL (default http://localhost:<PORT or 8787>/webhooks/end-of-call)',
    )
    .option('--hook <name>', 'hook to send to (default end-of-call)')
    .option('--key <key>', 'webhook key (default: the configured or generated one)')
    .option('--seed <n>', 'repeat the same synthetic calls')
    .option('--timeout-ms <ms>', "the sender's time-out (with --platform: the platform's own unless given)", '10000')
    .option('--json', 'print the summary as one JSON object')
    .option(
      '--platform <name>',
      "play a voice platform's sender instead: its events, its signature, its time-out and its retries; --count is calls",
    )
    .option('--secret <secret>', "with --platform: the platform's secret (default: the config's hook's)")
    .option('--option <key=value>', "with --platform: a platform hook's option (Vapi's auth, …)", collectOption, [])
    .option('-c, --config <file>', 'config file, to find the port and the key')
    .action(async (opts: Options, command: Command) => {
      if (opts.platform !== undefined) return simulatePlatformCommand(io, opts, command);
      for (const option of ['secret', 'option'] as const)
        if (command.getOptionValueSource(option) === 'cli') throw new Error(`--${option} goes with --platform`);
      // Every option is checked before the first request: a typo never turns into a half-sent run.
      const count = positive(opts.count, '--count');
      const rate = positiveNumber(opts.rate, '--rate');
      const duplicates = share(opts.duplicates, '--duplicates');
      const empty = share(opts.empty, '--empty');
      const methods = oneOf(opts.method, '--method', METHODS);
      const headerList = opts.header.map(header);
      // As in the service's webhook settings, a configured Content-Type decides how bodies are serialised (rule 2).
      const configured = configuredEncoding(headerList);
      if (configured && command.getOptionValueSource('encoding') === 'cli' && opts.encoding !== configured) {
        throw new Error(
          `--encoding ${opts.encoding} contradicts the Content-Type header, which asks for ${configured}`,
        );
      }
      const encodings = configured ? [configured] : oneOf(opts.encoding, '--encoding', ENCODINGS);
      const headers = Object.fromEntries(headerList);
      const query = Object.fromEntries(opts.query.map(queryPair));
      const seed = opts.seed === undefined ? undefined : whole(opts.seed, '--seed');
      const timeoutMs = positive(opts.timeoutMs, '--timeout-ms');
      const config = commandConfig(io.env, opts.config);
      const key = opts.key ?? (await webhookKey(config));
      if (key === undefined)
        throw new Error('no webhook key: pass --key, set CALLHOOK_API_KEYS, or start serve once to generate one');
      const line = progressLine(io.stderr);
      const onProgress =
        line &&
        ((done: number, total: number) => {
          if (done % 10 === 0 || done === total) line.show(`simulate: ${done}/${total} replies`);
        });
      const summary = await simulate({
        url: opts.url ?? `http://localhost:${config.port}`,
        hook: opts.hook,
        // An explicit empty --key sends no Authorization header, to see the receiver refuse.
        key: key || undefined,
        count,
        rate,
        duplicates,
        empty,
        encodings,
        methods,
        headers,
        query,
        seed,
        timeoutMs,
        onProgress,
      });
      line?.clear();
      io.out.print(opts.json ? JSON.stringify(summary) : describeSummary(summary));
      // As the sender sees it: any failed delivery is a lost call.
      if (summary.failures > 0) throw new ExitCode(1);
    });
}

const WEBHOOK_URL = /\/webhooks\/[^/?#]+\/?$/;

/**
 * `callhook simulate --platform NAME` (docs/reference.md#other-voice-platforms): the platform's events, signed with the
 * secret of its hook in the config or `--secret`, sent to that hook with the platform's time-out and retries.
 */
async function simulatePlatformCommand(io: CommandIo, opts: Options, command: Command): Promise<void> {
  const platform = platformNamed(opts.platform!, '--platform');
  // The calling service's settings have no meaning for a platform, which sends JSON POSTs of its own.
  for (const option of ['encoding', 'method', 'header', 'query', 'key'] as const)
    if (command.getOptionValueSource(option) === 'cli')
      throw new Error(`--${option} is the calling service's; ${platform.name} sends its own JSON POSTs`);
  const count = positive(opts.count, '--count');
  const rate = positiveNumber(opts.rate, '--rate');
  const duplicates = share(opts.duplicates, '--duplicates');
  const empty = share(opts.empty, '--empty');
  const seed = opts.seed === undefined ? undefined : whole(opts.seed, '--seed');
  const timeoutMs =
    command.getOptionValueSource('timeoutMs') === 'cli' ? positive(opts.timeoutMs, '--timeout-ms') : undefined;
  const config = commandConfig(io.env, opts.config);
  // The hook: named, or in a full webhook URL; else the config's hook of the platform, else one named like it.
  const inUrl = opts.url && WEBHOOK_URL.test(opts.url) ? target(opts.url, undefined).hook : undefined;
  const hooks = platformHooks(config.hooks, platform);
  if (opts.hook === undefined && inUrl === undefined && hooks.length > 1)
    throw new Error(
      `the config has ${hooks.length} ${platform.name} hooks (${hooks.join(', ')}): name one with --hook`,
    );
  const hook = opts.hook ?? inUrl ?? hooks[0] ?? platform.name;
  const signer = signerFor(platform, hook, { hooks: config.hooks, secret: opts.secret, options: opts.option });
  const line = progressLine(io.stderr);
  const summary = await simulatePlatform({
    url: opts.url ?? `http://localhost:${config.port}`,
    hook,
    ...signer,
    count,
    rate,
    duplicates,
    empty,
    seed,
    timeoutMs,
    onProgress: line && ((done) => done % 10 === 0 && line.show(`simulate: ${done} replies`)),
  });
  line?.clear();
  const sender = `${platform.name}'s sender: time-out ${timeoutMs ?? platform.sender.timeoutMs} ms, up to ${platform.sender.retries} retries`;
  io.out.print(opts.json ? JSON.stringify(summary) : `${sender}\n${describeSummary(summary)}`);
  if (summary.failures > 0) throw new ExitCode(1);
}

export function describeSummary(s: SimulateSummary): string {
  const counts = (record: Record<string, number>) =>
    Object.entries(record)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ') || 'none';
  const lines = [
    `sent ${s.sent} requests for ${s.calls} calls (${s.duplicates_sent} duplicates) in ${(s.elapsed_ms / 1000).toFixed(1)} s, ${s.rate}/s`,
    `methods: ${counts(s.by_method)}; encodings: ${counts(s.by_encoding)}`,
    ...(s.retries > 0 ? [`retries (sent again after a time-out, a network error or a non-2xx): ${s.retries}`] : []),
    `replies by status: ${counts(s.by_status)}`,
    `replies by reply status: ${counts(s.by_reply)}`,
    `latency ms: p50 ${s.latency_ms.p50}, p90 ${s.latency_ms.p90}, p99 ${s.latency_ms.p99}, max ${s.latency_ms.max}`,
    `failed (lost calls, as the sender records them): ${s.failures}`,
    ...s.failed.map(
      (f) =>
        `  ${f.call_id}: ${f.status} ${f.body}${f.attempts === undefined ? '' : ` (after ${f.attempts} attempts)`}`,
    ),
  ];
  return lines.join('\n');
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function header(text: string): [string, string] {
  const at = text.indexOf(':');
  if (at < 1) throw new Error(`--header takes 'Name: value', not "${text}"`);
  return [text.slice(0, at).trim(), text.slice(at + 1).trim()];
}

const MEDIA_TYPES: Record<string, Encoding> = {
  'application/json': 'json',
  'application/x-www-form-urlencoded': 'form',
  'multipart/form-data': 'multipart',
};

/** The encoding a `--header 'Content-Type: …'` asks for, if one was given. */
function configuredEncoding(headers: [string, string][]): Encoding | undefined {
  const given = headers.find(([name]) => name.toLowerCase() === 'content-type');
  if (!given) return undefined;
  const encoding = MEDIA_TYPES[given[1].split(';')[0]!.trim().toLowerCase()];
  if (!encoding)
    throw new Error(
      `--header Content-Type: the sender serialises ${Object.keys(MEDIA_TYPES).join(', ')} (spec 6.3), not ${given[1]}`,
    );
  return encoding;
}

function queryPair(text: string): [string, string] {
  const at = text.indexOf('=');
  if (at < 1) throw new Error(`--query takes key=value, not "${text}"`);
  return [text.slice(0, at), text.slice(at + 1)];
}

/** One of `values`, or `mixed` for all of them. */
function oneOf<T extends string>(text: string, option: string, values: readonly T[]): readonly T[] {
  if (text === 'mixed') return values;
  if ((values as readonly string[]).includes(text)) return [text as T];
  throw new Error(`${option} must be one of ${values.join(', ')} or mixed, not ${text}`);
}

function whole(text: string, option: string): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isSafeInteger(n) || n < 0)
    throw new Error(`${option} must be a whole number from 0, not ${text}`);
  return n;
}

function share(text: string, option: string): number {
  const n = Number(text);
  if (text.trim() === '' || !(n >= 0 && n <= 1)) throw new Error(`${option} must be a number from 0 to 1, not ${text}`);
  return n;
}

function positiveNumber(text: string, option: string): number {
  const n = Number(text);
  if (text.trim() === '' || !(n > 0) || !Number.isFinite(n))
    throw new Error(`${option} must be a number above 0, not ${text}`);
  return n;
}
