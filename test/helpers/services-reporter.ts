import type { Reporter, TestModule, Vitest } from 'vitest/node';
import type { ServiceName } from './services.js';

/**
 * Says at the end of the run, after vitest's own summary, which service tests did not run and why, one line per
 * missing service: a skip that only shows as a count is easy to read as "all is well".
 */
export default class ServicesReporter implements Reporter {
  private vitest: Vitest | undefined;

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const lines = servicesSummary(
      testModules.map((m) => ({
        file: m.relativeModuleId,
        missing: m.meta().missingServices ?? {},
        skipped: [...m.children.allTests('skipped')].length,
      })),
    );
    if (lines.length === 0) return;
    const log = (line: string) => (this.vitest ? this.vitest.logger.log(line) : console.log(line));
    log('');
    for (const line of lines) log(line);
  }
}

export interface ModuleServices {
  file: string;
  missing: Partial<Record<ServiceName, { why: string; hint: string }>>;
  skipped: number;
}

/** The summary's lines, empty when every test that needs a service found it. */
export function servicesSummary(modules: readonly ModuleServices[]): string[] {
  const byService = new Map<string, { hint: string; tests: number; files: string[] }>();
  for (const { file, missing, skipped } of modules) {
    for (const { why, hint } of Object.values(missing)) {
      const entry = byService.get(why) ?? { hint, tests: 0, files: [] };
      entry.tests += skipped;
      entry.files.push(file);
      byService.set(why, entry);
    }
  }
  if (byService.size === 0) return [];
  const lines = ['Service tests not run:'];
  for (const [why, { hint, tests, files }] of byService) {
    lines.push(`  ${why} — ${tests} ${tests === 1 ? 'test' : 'tests'} skipped (${files.sort().join(', ')}); ${hint}`);
  }
  return lines;
}
