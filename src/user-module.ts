import { pathToFileURL } from 'node:url';
import { ConfigError } from './config.js';

/**
 * Imports a module the config names (a sink's `module`, an in-call hook's `handler`) and checks that its default
 * export is a function, at start-up: a missing file or a wrong export stops the process with a line that names
 * the config key (`where`) and what the export should have been (`shape`). `F` is the type the caller expects.
 */
export async function importUserModule<F>(
  file: string,
  where: string,
  shape: string,
): Promise<{ default: F } & Record<string, unknown>> {
  let loaded: { default?: unknown } & Record<string, unknown>;
  try {
    loaded = (await import(pathToFileURL(file).href)) as typeof loaded;
  } catch (err) {
    throw new ConfigError(`${where}: cannot load ${file}: ${(err as Error).message}`, { cause: err });
  }
  if (typeof loaded.default !== 'function')
    throw new ConfigError(`${where}: ${file} has no default export that is ${shape}`);
  return loaded as { default: F } & Record<string, unknown>;
}
