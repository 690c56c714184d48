import { loadConfig } from '../config.js';
import { secretValues } from '../secret-values.js';
import { maskSecrets } from '../secrets.js';

/** Options whose value is a key or token given on the command line. */
const SECRET_FLAGS = new Set(['--key', '--api-key', '--admin-token']);

/**
 * A command's last line with the secrets taken out (contract section 6): an error can quote what a server
 * answered, and a server can quote the key it was sent. The secrets are those of the config (as far as it can be
 * read: a command that failed on its config has no secret of it to show) and the keys given on the command line.
 */
export function maskedForCli(text: string, argv: readonly string[], env: Record<string, string | undefined>): string {
  const secrets = argv.flatMap((arg, i) => {
    if (SECRET_FLAGS.has(arg) && argv[i + 1] !== undefined) return [argv[i + 1]!];
    const [flag, value] = arg.split(/=(.*)/s);
    return SECRET_FLAGS.has(flag!) && value ? [value] : [];
  });
  try {
    const configAt = argv.findIndex((arg) => arg === '-c' || arg === '--config');
    const config = loadConfig(env, configAt === -1 ? undefined : argv[configAt + 1]);
    // The sink types' own declarations need their modules loaded; the rules by name and place cover them here.
    secrets.push(...secretValues(config, []));
  } catch {
    // no config to read secrets from
  }
  return maskSecrets(text, secrets) as string;
}
