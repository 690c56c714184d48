import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { listReceipts, textOrBase64 } from '../admin/receipts.js';
import type { ReceiptInfo } from '../store/admin-queries.js';
import { type AdminClientOptions, adminClient, withAdminOptions } from './admin-client.js';
import { commandConfig, positive, withStore } from './context.js';
import type { CliIo, CommandIo } from './io.js';

/**
 * `callhook receipts list|ingest` (docs/reference.md#refused-requests): what every authenticated request left behind,
 * and the refused ones ingested again through the running serve, which normalises and routes them with its own config.
 */
export function receiptsCommand(io: CommandIo): Command {
  const receipts = new Command('receipts').description('requests as they arrived; refused ones can be ingested again');
  receipts
    .command('list')
    .description(
      'one line per receipt: id, received, hook, status, outcome, the call it stored or was ingested as, error',
    )
    .option('--rejected', 'only refused requests (400, 415, 413, 503)')
    .option('--hook <name>', 'only this hook')
    .option('--limit <n>', 'at most this many', '50')
    .option('--after <id>', 'receipts after this id (cursor)')
    .option('-c, --config <file>', 'config file')
    .action(async (opts: { rejected?: boolean; hook?: string; limit: string; after?: string; config?: string }) => {
      await withStore(commandConfig(io.env, opts.config), async (store) => {
        const { receipts: page } = await listReceipts(
          { store },
          {
            outcome: opts.rejected ? 'rejected' : undefined,
            hook: opts.hook,
            limit: positive(opts.limit, '--limit'),
            after: opts.after === undefined ? undefined : positive(opts.after, '--after'),
          },
        );
        await io.out.write(page.map((r) => `${receiptLine(r)}\n`).join(''));
      });
    });
  withAdminOptions(
    receipts
      .command('ingest')
      .description('ingest a refused request again through the running serve, as it came or corrected'),
  )
    .argument('<id>', 'the receipt id (receipts list --rejected)')
    .option('--body <file>', 'the corrected body, read from this file (- for standard input)')
    .option('--content-type <type>', 'the content type to read the body as')
    .action(async (id: string, opts: AdminClientOptions & { config?: string; body?: string; contentType?: string }) => {
      const receipt = positive(id, 'the receipt id');
      const body = opts.body === undefined ? undefined : await readBody(opts.body, io.stdin);
      const admin = await adminClient(commandConfig(io.env, opts.config), opts);
      const reply = (await admin('POST', `/receipts/${receipt}/ingest`, {
        ...(body === undefined ? {} : asText(body)),
        ...(opts.contentType === undefined ? {} : { content_type: opts.contentType }),
      })) as { status: string; id: string; problems?: { field: string; code: string }[] };
      const problems = reply.problems?.length
        ? `; problems: ${reply.problems.map((p) => `${p.field} ${p.code}`).join(', ')}`
        : '';
      await io.out.write(`receipt ${receipt} ingested: ${reply.status} ${reply.id}${problems}\n`);
    });
  return receipts;
}

function receiptLine(r: ReceiptInfo): string {
  const call = r.ingestedAs ? `ingested as ${r.ingestedAs}` : (r.callId ?? '');
  return [r.id, r.receivedAt, r.hook, r.status, r.outcome, call, r.error ?? ''].join('\t').trimEnd();
}

/** The file's bytes, or with `-` everything on standard input up to its end. */
async function readBody(path: string, stdin: CliIo['stdin']): Promise<Uint8Array> {
  try {
    if (path !== '-') return readFileSync(path);
    const chunks: Buffer[] = [];
    for await (const chunk of stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    return Buffer.concat(chunks);
  } catch (err) {
    throw new Error(`--body ${path}: ${(err as Error).message}`);
  }
}

/**
 * The admin API takes a body as text, or in base64 for bytes that are not UTF-8 (docs/reference.md#refused-requests).
 * Text that JSON would escape to more than its base64 (control characters) goes in base64 too: the API takes an ingest
 * body up to body_limit as base64 would carry it, so any body within body_limit gets through.
 */
function asText(bytes: Uint8Array): { body: string } | { body_base64: string } {
  const body = textOrBase64(bytes);
  // Both travel as JSON strings, quotes and all.
  if ('text' in body && Buffer.byteLength(JSON.stringify(body.text)) <= Math.ceil(bytes.byteLength / 3) * 4 + 2)
    return { body: body.text };
  return { body_base64: Buffer.from(bytes).toString('base64') };
}
