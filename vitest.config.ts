import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'examples/**/*.test.ts'],
    // Most of a test's time is spent waiting on a server, a child process or a timer, not on the CPU: three files at
    // once on two cores take the suite from about 330 s to about 190 s (vitest's default is one worker per core less one).
    maxWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The machine's own services (PostgreSQL, …), found once for the whole run; see test/helpers/services.ts.
    globalSetup: ['test/helpers/services-setup.ts'],
    reporters: ['default', './test/helpers/services-reporter.ts'],
  },
});
