import { type Config, loadConfig } from '../config.js';
import { secretValues, urlSecrets } from '../secret-values.js';
import { maskSecrets } from '../secrets.js';
import { resolveConfiguredSinks } from '../sinks/registry.js';

/** Options whose value is a key or token given on the command line. */
const SECRET_FLAGS = new Set(['--key', '--api-key', '--admin-token']);

/**
 * A command's last line with the secrets taken out (docs/reference.md#secrets): an error can quote what a server
 * answered, and a server can quote the key it was sent. The secrets are those of the config (as far as it can be
 * read: a command that failed on its config has no secret of it to show), the keys given on the command line, and
 * the credentials inside any URL given there (`--url`, `--api-url`). The sink types the config names are loaded for
 * the options each declares secret (a nats `pass`, a module sink's own), as `serve` decides them.
 */
export async function maskedForCli(
  text: string,
  argv: readonly string[],
  env: Record<string, string | undefined>,
): Promise<string> {
  // CALLHOOK_TOKEN, the personal token the admin client sends (admin-client.ts), whatever the config says.
  const secrets: string[] = env.CALLHOOK_TOKEN ? [env.CALLHOOK_TOKEN] : [];
  let configPath: string | undefined;
  for (const [i, arg] of argv.entries()) {
    const [flag, inline] =
      arg.startsWith('--') && arg.includes('=')
        ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
        : [arg, undefined];
    const value = inline ?? argv[i + 1];
    if (SECRET_FLAGS.has(flag) && value) secrets.push(value);
    if ((flag === '--config' || flag === '-c') && value) configPath = value;
    secrets.push(...urlSecrets(inline ?? arg));
  }
  let config: Config;
  try {
    config = loadConfig(env, configPath);
  } catch {
    return maskSecrets(text, secrets) as string; // no config to read secrets from
  }
  // A sink entry that cannot be resolved (the error being reported, perhaps) still has its secrets by name and place.
  const specs = await resolveConfiguredSinks(config).catch(() => []);
  secrets.push(...secretValues(config, specs));
  return maskSecrets(text, secrets) as string;
}
