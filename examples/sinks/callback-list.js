// A custom sink for callhook: every caller who asked to be called back goes into a CSV file that the next
// campaign can import as its contact list. Load it with:
//
//   sinks:
//     - name: callbacks
//       type: module
//       module: ./examples/sinks/callback-list.js     # relative to the config file
//       path: ./data/callbacks.csv                      # this sink's own options, checked by `options` below
//       when: { field: call_outcome, matches: "call ?back" }
//
// The default export is the factory `(options, context) => Sink`; `options` (optional) is a zod schema that
// callhook checks at start-up. `deliver` may be called again for a record after a crash (at least once): the
// idempotency key lets a sink drop the repeat. Throw to fail the attempt: it is retried on the sink's schedule,
// unless the error has `permanent: true`.
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';

export const options = z.strictObject({
  path: z.string().min(1),
});

const HEADER = 'first_name,last_name,phone,description,callhook_key\n';

export default async function callbackList({ path }, { log, name }) {
  const file = resolve(path);
  await mkdir(dirname(file), { recursive: true });
  const written = new Set();
  const existing = await readFile(file, 'utf8').catch(() => '');
  if (existing === '') await appendFile(file, HEADER);
  // Keys of rows already written survive a restart in the file itself (last column).
  for (const line of existing.split('\n').slice(1)) if (line) written.add(line.slice(line.lastIndexOf(',') + 1));

  return {
    async deliver(record, { idempotencyKey }) {
      if (written.has(idempotencyKey)) return;
      const phone = record.data.phone_number;
      if (!phone) {
        const err = new Error(`call ${record.id} has no valid phone number to call back`);
        err.permanent = true; // no retry can add a number
        throw err;
      }
      const row = [record.data.first_name, record.data.last_name, phone, record.data.call_summary, idempotencyKey].map(
        csv,
      );
      await appendFile(file, `${row.join(',')}\n`);
      written.add(idempotencyKey);
      log.debug({ sink: name, callId: record.id }, 'callback queued');
    },
  };
}

function csv(value) {
  const text = value === undefined ? '' : String(value);
  return /[",\n\r]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
