import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'examples/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The machine's own services (PostgreSQL, …), found once for the whole run; see test/helpers/services.ts.
    globalSetup: ['test/helpers/services-setup.ts'],
    reporters: ['default', './test/helpers/services-reporter.ts'],
  },
});
