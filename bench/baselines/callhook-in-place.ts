import { join } from 'node:path';
import { ROOT } from '../lib/processes.js';

/**
 * callhook as `callhook serve` runs it, built, but with SQLite's file written on the event loop: no writer thread,
 * so parsing, normalising and every commit run where HTTP does. Against callhook's own row in the same run, it says
 * whether the thread (src/intake/thread.ts) pays on the machine the bench runs on (issue 24).
 */

const { serve } = (await import(join(ROOT, 'dist/main.js'))) as typeof import('../../src/main.js');
const running = await serve({
  env: process.env,
  writerThread: false,
  print: (line) => process.stderr.write(`${line}\n`),
});
process.on('SIGTERM', () => void running.close().then(() => process.exit(0)));
