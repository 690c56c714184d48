import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { Readable, Writable } from 'node:stream';
import { promisify } from 'node:util';
import { runCli } from '../../src/cli/program.js';

const run = promisify(execFile);

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `callhook <args>` run in this process (src/cli/program.ts), as `callhook()` runs it in a process of its own: the
 * same env (this process's, LOG_LEVEL silent, then `env`), stdin not a terminal (empty, or `stdin`), and what it
 * writes and the exit code it gives. For everything but the process itself: exit codes and output on a closed pipe,
 * a terminal, signals and crashes are `callhook()`, `callhookPiped()` and `callhookOnTerminal()`'s.
 */
export async function runCallhook(
  args: string[],
  env: Record<string, string> = {},
  { stdin }: { stdin?: string } = {},
): Promise<CliResult> {
  const stdout = collected();
  const stderr = collected();
  const code = await runCli([process.execPath, 'src/cli/index.ts', ...args], {
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    stdin: Readable.from(stdin === undefined ? [] : [Buffer.from(stdin)]),
    stdout: stdout.stream,
    stderr: stderr.stream,
  });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** A stream that keeps what is written to it, read back as UTF-8 once the run is over, as execFile reads a pipe. */
function collected(): { stream: Writable; text: () => string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk);
      done();
    },
  });
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

/** `callhook <args>` as a user runs it from the checkout, in its own process; a failure is a result, not a throw. */
export async function callhook(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', ...args], {
      env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as CliResult;
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/**
 * `callhook <args> | <reader>` through a real shell pipe, as a user types it. The command's exit status is
 * appended to stderr as `exit=N` (sh has no pipefail), after whatever the command itself wrote there.
 */
export async function callhookPiped(
  args: string[],
  reader: string,
  env: Record<string, string> = {},
): Promise<{ stdout: string; stderr: string }> {
  const script = `{ "$0" --import tsx src/cli/index.ts "$@"; echo "exit=$?" >&2; } | ${reader}`;
  const { stdout, stderr } = await run('sh', ['-c', script, process.execPath, ...args], {
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
  });
  return { stdout, stderr };
}

/**
 * `callhook <args>` on a terminal: util-linux `script` gives it a pseudo-terminal for stdin, stdout and stderr, and
 * `input` is typed into it. What the terminal shows (the echo of the input included) comes back as stdout.
 */
export async function callhookOnTerminal(
  args: string[],
  input: string,
  env: Record<string, string> = {},
): Promise<CliResult> {
  const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
  const command = [process.execPath, '--import', 'tsx', 'src/cli/index.ts', ...args].map(quote).join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], {
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
  });
  child.stdin.end(input);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'close')) as [number];
  return { code, stdout, stderr };
}
