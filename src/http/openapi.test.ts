import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { adminOperations } from '../admin/operations.js';
import { CallhookError } from '../errors.js';
import { buildIntake } from '../intake/intake.js';
import { routeRoles } from '../operators/guard.js';
import type { Store } from '../store/store.js';
import { adminRoutes } from './admin.js';
import { openApiDocument } from './openapi.js';

const TOKEN = 'admin-token-0123456789';

interface Parameter {
  name: string;
  in: 'path' | 'query';
  schema: { type?: string; enum?: string[] };
}
interface BodySchema {
  type?: string | string[];
  items?: BodySchema;
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: {
    content: { 'application/json': { schema: { properties: Record<string, BodySchema>; required?: string[] } } };
  };
}

/**
 * The document's admin parameters and bodies are generated from the schemas the router validates with
 * (admin-schemas.ts): every admin route the router has is in it, and what it documents is what the route takes.
 */
describe('the OpenAPI document', () => {
  // A store that is never reached: a request the schemas let through fails at the store, one they refuse never gets
  // there.
  const store = {} as Store;
  const intake = buildIntake({ store, hooks: new Map() });
  const router = adminRoutes({
    admin: adminOperations({ store, intake, sinks: [], notify: () => {}, bodyLimitBytes: 1024 }),
    intake,
    adminToken: TOKEN,
    tokens: store,
    secrets: [],
    bodyLimitBytes: 1024,
  });
  const routes = router.routes
    .filter((r) => r.method !== 'ALL')
    .map((r) => [r.method.toLowerCase(), `/admin${r.path.replace(/:(\w+)/g, '{$1}')}`] as const);
  const paths = (openApiDocument(['end-of-call']) as { paths: Record<string, Record<string, Operation>> }).paths;
  const operations = Object.entries(paths)
    .filter(([path]) => path.startsWith('/admin/'))
    .flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ method, path, operation })));

  const app = new Hono()
    .route('/admin', router)
    .onError((err, c) =>
      err instanceof CallhookError
        ? c.json(err.toBody(), err.status as 400)
        : c.json({ error: 500, message: String(err) }, 500),
    );
  /** The route's answer to a request with these query parameters or this body, on the path with every parameter `1`. */
  const send = async (
    method: string,
    path: string,
    { query = {}, body }: { query?: Record<string, string>; body?: unknown } = {},
  ) => {
    const url = `${path.replace(/\{\w+\}/g, '1')}?${new URLSearchParams(query)}`;
    const text = body === undefined ? undefined : JSON.stringify(body);
    const length: Record<string, string> =
      text === undefined ? {} : { 'content-length': String(Buffer.byteLength(text)) };
    const res = await app.request(url, {
      method: method.toUpperCase(),
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...length },
      body: text,
    });
    return { status: res.status, message: ((await res.json()) as { message: string }).message };
  };
  /** A value of the right type for a documented parameter: its first enum value, a number, or some text. */
  const sample = ({ schema }: { schema: { type?: string | string[]; enum?: string[] } }) =>
    schema.enum?.[0] ?? (schema.type === 'integer' || schema.type === 'number' ? '1' : 'x');
  /** A value of the right type for a documented body property. */
  const value = ({ type, items }: BodySchema): unknown =>
    type === 'object' ? { first_name: 'x' } : type === 'array' ? [value(items ?? {})] : type === 'integer' ? 1 : 'x';

  it('has every path and method of the admin router', () => {
    expect(routes.length).toBeGreaterThan(10);
    for (const [method, path] of routes) expect(paths[path]?.[method], `${method.toUpperCase()} ${path}`).toBeDefined();
  });

  it('describes no admin route the router does not have', () => {
    const served = new Set(routes.map(([method, path]) => `${method} ${path}`));
    for (const { method, path } of operations)
      expect(served, `${method.toUpperCase()} ${path}`).toContain(`${method} ${path}`);
  });

  it('documents the role each route needs as its guard names it (docs/reference.md#operators)', () => {
    const guarded = routeRoles(router.routes).map(
      ({ method, path, role }) => `${method.toLowerCase()} /admin${path.replace(/:(\w+)/g, '{$1}')} ${role}`,
    );
    const documented = operations.map(
      ({ method, path, operation }) => `${method} ${path} ${(operation as { 'x-role'?: string })['x-role']}`,
    );
    expect(guarded.sort()).toEqual(documented.sort());
  });

  it("documents a route's path parameters as its path names them", () => {
    for (const { method, path, operation } of operations) {
      const named = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      expect(
        (operation.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name),
        `${method} ${path}`,
      ).toEqual(named);
    }
  });

  it('documents exactly the query parameters a route takes: each one documented is taken, any other refused by name', async () => {
    const withQuery = operations.filter(({ operation }) => operation.parameters?.some((p) => p.in === 'query'));
    expect(withQuery.map(({ path }) => path).sort()).toEqual([
      '/admin/audit',
      '/admin/calls',
      '/admin/deliveries',
      '/admin/erasures',
      '/admin/incidents',
      '/admin/people',
      '/admin/receipts',
    ]);
    for (const { method, path, operation } of withQuery) {
      for (const parameter of operation.parameters!.filter((p) => p.in === 'query')) {
        const { message } = await send(method, path, { query: { [parameter.name]: sample(parameter) } });
        expect(message, `${path}?${parameter.name}`).not.toMatch(/unknown parameter/);
      }
      expect(await send(method, path, { query: { colour: 'red' } }), path).toEqual({
        status: 400,
        message: 'Bad request: colour: unknown parameter',
      });
    }
  });

  it('documents exactly the body a route takes: each property documented is taken, any other refused by name', async () => {
    const withBody = operations.filter(({ operation }) => operation.requestBody);
    expect(withBody.length).toBe(9);
    for (const { method, path, operation } of withBody) {
      const { properties, required = [] } = operation.requestBody!.content['application/json'].schema;
      for (const [name, schema] of Object.entries(properties)) {
        const { message } = await send(method, path, { body: { [name]: value(schema) } });
        expect(message, `${method} ${path} ${name}`).not.toMatch(/unknown parameter/);
      }
      const body = { ...Object.fromEntries(required.map((name) => [name, value(properties[name]!)])), colour: 'red' };
      expect(await send(method, path, { body }), `${method} ${path}`).toEqual({
        status: 400,
        message: 'Bad request: colour: unknown parameter',
      });
    }
  });
});
