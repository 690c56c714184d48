import { appendFileSync } from 'node:fs';

/**
 * Module hooks (node:module `register`, Node 20.6+) that write every module URL the process resolves to a file,
 * one a line, before the import goes on: what a test reads to see which packages a process loaded
 * (test/helpers/loaded-packages.ts). Runs on the loader's thread, so it appends synchronously: a line is in the
 * file before the importer gets the module.
 */

let file = '';

export function initialize(data: { file: string }): void {
  file = data.file;
}

type Resolved = { url: string };
type NextResolve = (specifier: string, context?: unknown) => Resolved | Promise<Resolved>;

export async function resolve(specifier: string, context: unknown, nextResolve: NextResolve): Promise<Resolved> {
  const resolved = await nextResolve(specifier, context);
  appendFileSync(file, `${resolved.url}\n`);
  return resolved;
}
