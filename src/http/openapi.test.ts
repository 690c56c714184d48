import { describe, expect, it } from 'vitest';
import type { Store } from '../store/store.js';
import { adminRoutes } from './admin.js';
import { openApiDocument } from './openapi.js';

/** The document is written by hand beside the routes (openapi.ts): every admin route the router has is in it. */
describe('the OpenAPI document', () => {
  const routes = adminRoutes({ store: {} as Store, adminToken: 'admin-token-0123456789', secrets: [], hooks: new Map(), sinkNames: [], notify: () => {}, bodyLimitBytes: 1024 })
    .routes.filter((r) => r.method !== 'ALL')
    .map((r) => [r.method.toLowerCase(), `/admin${r.path.replace(/:(\w+)/g, '{$1}')}`] as const);
  const paths = (openApiDocument(['end-of-call']) as { paths: Record<string, Record<string, unknown>> }).paths;

  it('has every path and method of the admin router', () => {
    expect(routes.length).toBeGreaterThan(10);
    for (const [method, path] of routes) expect(paths[path]?.[method], `${method.toUpperCase()} ${path}`).toBeDefined();
  });

  it('describes no admin route the router does not have', () => {
    const served = new Set(routes.map(([method, path]) => `${method} ${path}`));
    for (const [path, methods] of Object.entries(paths)) {
      if (!path.startsWith('/admin/')) continue;
      for (const method of Object.keys(methods)) expect(served, `${method.toUpperCase()} ${path}`).toContain(`${method} ${path}`);
    }
  });
});
