import type { TestProject } from 'vitest/node';
import { probeServices } from './services.js';

/** vitest's globalSetup: every service of services.ts probed once for the whole run, before any test file. */
export default async function setup(project: TestProject): Promise<void> {
  project.provide('services', await probeServices(process.env));
}
