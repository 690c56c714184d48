import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The layers of src/ (docs/design.md): a folder may not import one above it. Read from the source itself: every
 * import, `export … from` and `import()` of every module under src/, tests included, parsed by TypeScript's own
 * pre-processor (so a path named in a comment or a string is not an import), each resolved to the file it names.
 */

const SRC = resolve(import.meta.dirname, '../src');

/** Each rule: modules under `from` import nothing under any of `not`, for the reason given. */
const RULES: { from: string; not: string[]; why: string }[] = [
  { from: 'sinks', not: ['delivery'], why: 'the worker drives the sinks; a sink knows nothing of it' },
  { from: 'normalize', not: ['http', 'store'], why: 'normalising is pure functions of the fields' },
  { from: 'store', not: ['http'], why: 'the store knows nothing of requests' },
  { from: 'routing', not: ['sinks', 'delivery', 'intake'], why: 'the registry and the intake both import it' },
];

interface Import {
  /** The importing module, from src/: `sinks/registry.ts`. */
  module: string;
  /** As written in it. */
  specifier: string;
  /** What it names, from src/ (`delivery/worker.js`); outside src/ it starts with `../`. */
  target: string;
}

function modulesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts'))
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)));
}

/** Every relative import of every module under src/; a package's name is no layer of ours. */
function importGraph(): Import[] {
  return modulesUnder(SRC).flatMap((module) =>
    ts
      .preProcessFile(readFileSync(join(SRC, module), 'utf8'), true, true)
      .importedFiles.map((file) => file.fileName)
      .filter((specifier) => specifier.startsWith('.'))
      .map((specifier) => ({ module, specifier, target: relative(SRC, resolve(SRC, dirname(module), specifier)) })),
  );
}

const under = (path: string, folder: string) => path.startsWith(`${folder}/`);

/** The imports that break a rule, each named with its module, its specifier as written, and the rule. */
function violations(graph: readonly Import[]): string[] {
  return graph.flatMap(({ module, specifier, target }) =>
    RULES.filter((rule) => under(module, rule.from)).flatMap((rule) =>
      rule.not
        .filter((folder) => under(target, folder))
        .map(
          (folder) =>
            `src/${module} imports '${specifier}' (src/${target}): ${rule.from}/ must not import ${folder}/ (${rule.why})`,
        ),
    ),
  );
}

describe('the layers of src/', () => {
  const graph = importGraph();

  it('reads imports, exports from, type imports and dynamic imports alike', () => {
    const has = (module: string, target: string) => graph.some((i) => i.module === module && i.target === target);
    expect(has('delivery/worker.ts', 'sinks/sink.js')).toBe(true); // import type
    expect(has('sinks/registry.ts', 'sinks/redis-stream/redis-stream.js')).toBe(true); // import()
    expect(has('client/index.ts', 'client/schemas.js')).toBe(true); // export * from
    expect(has('routing/routes.ts', 'routing/filter.js')).toBe(true);
  });

  it('has no module import a layer above its own', () => {
    expect(violations(graph)).toEqual([]);
  });

  it('names the offending import when one does', () => {
    const offending = {
      module: 'sinks/http/http.ts',
      specifier: '../../delivery/worker.js',
      target: 'delivery/worker.js',
    };
    const allowed = { module: 'delivery/worker.ts', specifier: '../sinks/sink.js', target: 'sinks/sink.js' };
    expect(violations([offending, allowed])).toEqual([
      "src/sinks/http/http.ts imports '../../delivery/worker.js' (src/delivery/worker.js): sinks/ must not import delivery/ (the worker drives the sinks; a sink knows nothing of it)",
    ]);
  });
});
