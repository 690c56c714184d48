import { mkdtempSync, readFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Run as its own process, `node --import tsx test/helpers/loaded-packages.ts '<config as JSON>'`: serves a receiver
 * with that config (its sinks resolved and opened, one call posted and attempted by every sink), closes it, and prints
 * the names of the packages the process loaded as one JSON array. What proves that a sink's client library is loaded
 * only when a configured sink uses it (docs/reference.md#queues-and-databases), as only a fresh process can: a test's
 * own process has loaded every sink's module already.
 */

const config: unknown = JSON.parse(process.argv[2]!);
const resolved = join(mkdtempSync(join(tmpdir(), 'callhook-loaded-')), 'resolved.txt');
// Registered before anything of the receiver is imported, so every module it resolves from here on is written down.
register('./resolve-recorder.ts', import.meta.url, { data: { file: resolved } });

const { post, readStoreFile, sampleCall, startServer, until } = await import('./server.js');
const server = await startServer({ config });
await post(server.url, sampleCall());
const attempted = () =>
  readStoreFile(
    server.dataDir,
    (db) =>
      db
        .prepare('SELECT (SELECT COUNT(*) FROM deliveries) = (SELECT COUNT(DISTINCT delivery_id) FROM attempts)')
        .pluck()
        .get() === 1,
  );
await until(attempted);
await server.close();

/** `@scope/name` or `name`: the package a file under node_modules belongs to. */
const packageOf = (path: string) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path)?.[1];
// ES modules through the hook; CommonJS files a package requires inside itself (and any createRequire) through
// the require cache.
const files = [...readFileSync(resolved, 'utf8').split('\n'), ...Object.keys(createRequire(import.meta.url).cache)];
const packages = new Set(files.map(packageOf).filter((name) => name !== undefined));
process.stdout.write(`${JSON.stringify([...packages].sort())}\n`);
process.exit(0);
