import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { setupApp } from '../helpers/app.js';

// The document is checked generically: a route added later is covered without touching this file.

// A high per-IP limit for unknown keys: the last test calls every authenticated route without one.
const h = await setupApp({ UNKNOWN_KEY_RATE_LIMIT_PER_MINUTE: 100_000 });

/**
 * Routes deliberately left out of the document: the document itself, its reference page, /mcp
 * and /mcp/oauth (JSON-RPC, see docs/mcp.md) with OAuth's metadata (docs/oauth.md; on here, the
 * harness's HOST being loopback), the console under /app (HTML for people, docs/console.md) and
 * the site root, which only sends a browser there.
 */
const UNDOCUMENTED = [/^\/openapi\.json$/, /^\/docs(\/.*)?$/, /^\/mcp(\/oauth)?$/, /^\/\.well-known\/oauth-/, /^\/app(\/.*)?$/, /^\/$/];
const ERROR_REF = '#/components/schemas/Error';
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string; required?: boolean }[];
  responses?: Record<string, { description?: string; headers?: Record<string, unknown>; content?: Record<string, { schema?: { $ref?: string } }> }>;
}
interface Document {
  openapi: string;
  servers?: { url: string; description?: string }[];
  paths: Record<string, Partial<Record<(typeof METHODS)[number], Operation>>>;
  tags?: { name: string }[];
  components?: { securitySchemes?: Record<string, unknown>; schemas?: Record<string, unknown> };
}
interface Op {
  path: string;
  method: (typeof METHODS)[number];
  op: Operation;
  key: string;
}

let doc: Document;
let ops: Op[];

beforeAll(async () => {
  const res = await h.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(res.statusCode).toBe(200);
  doc = res.json();
  ops = Object.entries(doc.paths).flatMap(([path, item]) =>
    METHODS.flatMap((method) => (item[method] ? [{ path, method, op: item[method], key: `${method.toUpperCase()} ${path}` }] : [])),
  );
});

/**
 * Every (METHOD path) the router serves, from Fastify's route tree (`printRoutes()` with common
 * prefixes: each line's text continues its parent's, and a line with "(METHODS)" is a route).
 * Paths use OpenAPI's `{param}` form; HEAD routes Fastify adds beside a GET are left out.
 */
function routerOperations(): Set<string> {
  const stack: string[] = [''];
  const found = new Map<string, Set<string>>();
  for (const line of h.app.printRoutes().split('\n')) {
    const m = /^((?:[│├└─ ]{4})*)(\S+)(?: \(([A-Z, ]+)\))?$/u.exec(line);
    if (!m) continue;
    const depth = [...(m[1] ?? '')].length / 4;
    const path = (stack[depth - 1] ?? '') + (m[2] ?? '');
    stack[depth] = path;
    stack.length = depth + 1;
    if (!m[3]) continue;
    const openapiPath = path.replace(/:(\w+)/g, '{$1}');
    const methods = found.get(openapiPath) ?? new Set<string>();
    for (const method of m[3].split(', ')) methods.add(method);
    found.set(openapiPath, methods);
  }
  const out = new Set<string>();
  for (const [path, methods] of found) {
    if (UNDOCUMENTED.some((re) => re.test(path))) continue;
    for (const method of methods) if (!(method === 'HEAD' && methods.has('GET'))) out.add(`${method} ${path}`);
  }
  return out;
}

const isPublic = (op: Operation) => Array.isArray(op.security) && op.security.length === 0;
const usesBearer = (op: Operation) => (op.security ?? []).some((req) => 'bearerAuth' in req);

describe('GET /openapi.json — happy', () => {
  it('is OpenAPI 3.1 and documents exactly the routes the app serves, minus /openapi.json and /docs', () => {
    expect(doc.openapi).toBe('3.1.0');
    // No PUBLIC_BASE_URL here: the server is wherever the document was fetched from.
    expect(doc.servers).toEqual([{ url: '/', description: 'This server' }]);
    const documented = new Set(ops.map((o) => o.key));
    const served = routerOperations();
    // The known routes, so a broken route-tree parser cannot make this pass vacuously.
    for (const key of ['GET /healthz', 'GET /readyz', 'GET /api/v1/me']) {
      expect(served).toContain(key);
      expect(documented).toContain(key);
    }
    expect([...documented].sort()).toEqual([...served].sort());
    for (const { path, method } of ops) {
      expect(h.app.hasRoute({ url: path.replace(/\{(\w+)\}/g, ':$1'), method: method.toUpperCase() as 'GET' }), `${method} ${path}`).toBe(true);
    }
    expect(Object.keys(doc.paths).filter((p) => UNDOCUMENTED.some((re) => re.test(p)))).toEqual([]);
  });

  it('gives every operation a unique operationId, a summary, defined tags and an explicit security requirement', () => {
    const tagNames = new Set((doc.tags ?? []).map((t) => t.name));
    const schemes = new Set(Object.keys(doc.components?.securitySchemes ?? {}));
    const ids = new Set<string>();
    for (const { key, op } of ops) {
      expect(op.operationId, key).toMatch(/^[a-zA-Z][a-zA-Z0-9]*$/);
      expect(ids.has(op.operationId!), `${key}: duplicate operationId ${op.operationId}`).toBe(false);
      ids.add(op.operationId!);
      expect(op.summary?.trim(), key).toBeTruthy();
      expect(op.tags?.length, key).toBeGreaterThan(0);
      for (const tag of op.tags ?? []) expect(tagNames.has(tag), `${key}: tag ${tag} is not in the top-level tags`).toBe(true);
      // `security: []` says "public" on purpose; a missing one would inherit nothing and say nothing.
      expect(Array.isArray(op.security), `${key}: security must be set ([] for public routes)`).toBe(true);
      for (const req of op.security ?? []) for (const name of Object.keys(req)) expect(schemes.has(name), `${key}: ${name}`).toBe(true);
    }
  });

  it('names path parameters as the seed does ({id}, a nested resource\'s {thing_id}) and declares each one', () => {
    for (const { key, path, op } of ops) {
      const inPath = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      const declared = (op.parameters ?? []).filter((p) => p.in === 'path');
      expect(declared.map((p) => p.name).sort(), key).toEqual([...inPath].sort());
      for (const p of declared) {
        expect(p.required, `${key}: ${p.name}`).toBe(true);
        const nested = inPath.indexOf(p.name) > 0;
        expect(p.name, `${key}: path parameters are named {id} (seed), a nested one {thing_id}`).toMatch(nested ? /^[a-z]+_id$/ : /^id$/);
      }
    }
  });

  it('types query and path parameters as the values they carry (integers, booleans, numbers), not digit strings', () => {
    const expected: Record<string, string> = {
      page: 'integer',
      per_page: 'integer',
      min_traffic: 'integer',
      id: 'integer',
      item_id: 'integer',
      max_price_usd: 'number',
      verified_traffic: 'boolean',
      your_turn: 'boolean',
    };
    const seen = new Set<string>();
    for (const { key, op } of ops) {
      for (const p of (op.parameters ?? []) as { name: string; in: string; schema?: { type?: string; pattern?: string; enum?: unknown[] } }[]) {
        if (p.in === 'header') continue;
        const type = expected[p.name];
        if (type === undefined) continue;
        seen.add(p.name);
        expect(p.schema?.type, `${key} ${p.name}`).toBe(type);
        expect(p.schema?.pattern, `${key} ${p.name}`).toBeUndefined();
        expect(p.schema?.enum, `${key} ${p.name}`).toBeUndefined();
      }
    }
    expect([...seen].sort()).toEqual(Object.keys(expected).sort());
  });

  it('names a component schema for every resource, and the operations refer to them', () => {
    const names = Object.keys(doc.components?.schemas ?? {});
    for (const name of ['Outlet', 'OutletSummary', 'Offer', 'Order', 'PublisherOrder', 'OrderMessage', 'Plan', 'LedgerEntry', 'Me', 'BrandKit', 'PaginationMeta', 'Error']) {
      expect(names, name).toContain(name);
    }
    const dataRef = (path: string, method: 'get' | 'post', status: string) =>
      JSON.stringify(doc.paths[path]![method]!.responses![status]!.content!['application/json']!.schema);
    expect(dataRef('/api/v1/outlets/{id}', 'get', '200')).toContain('#/components/schemas/Outlet"');
    expect(dataRef('/api/v1/orders', 'post', '201')).toContain('#/components/schemas/Order"');
    expect(dataRef('/api/v1/plan', 'post', '200')).toContain('#/components/schemas/Plan"');
    expect(dataRef('/api/v1/ledger', 'get', '200')).toContain('#/components/schemas/LedgerEntry"');
  });

  it('describes the Workspace tag by what its operations serve (no projects: there is no projects endpoint)', () => {
    const workspace = (doc.tags as { name: string; description?: string }[]).find((t) => t.name === 'Workspace')!;
    const paths = ops.filter((o) => o.op.tags?.includes('Workspace')).map((o) => o.path);
    expect(paths.some((p) => p.includes('project'))).toBe(false);
    expect(workspace.description).not.toMatch(/project/i);
    expect(paths).toEqual(expect.arrayContaining(['/api/v1/me', '/api/v1/ledger']));
  });

  it('documents the responses and headers every operation can answer', () => {
    for (const { key, path, op } of ops) {
      const responses = op.responses ?? {};
      const statuses = Object.keys(responses);
      expect(statuses.some((s) => /^2/.test(s)), `${key}: a 2xx response`).toBe(true);
      for (const [status, response] of Object.entries(responses)) {
        expect(response.description, `${key} ${status}`).toBeTruthy();
        expect(response.description, `${key} ${status}`).not.toBe('Default Response');
        expect(response.headers, `${key} ${status}`).toHaveProperty('X-Request-Id');
      }
      if (isPublic(op)) continue;
      // Authenticated: a bad key, the rate limit and the rate-limit headers on every answer below
      // 500 but 401 (there they would describe the address's bucket, not a key's).
      expect(statuses, key).toEqual(expect.arrayContaining(['401', '429']));
      for (const [status, response] of Object.entries(responses)) {
        if (Number(status) >= 500 || status === '401') continue;
        // Interface B reads its body before its key: a 400 or 413 there counts in the address's
        // bucket and carries no key's rate-limit headers.
        if (path.startsWith('/api/') && !path.startsWith('/api/v1/') && (status === '400' || status === '413')) {
          expect(response.headers, `${key} ${status}`).not.toHaveProperty('X-RateLimit-Limit');
          continue;
        }
        expect(response.headers, `${key} ${status}`).toHaveProperty('X-RateLimit-Limit');
        expect(response.headers, `${key} ${status}`).toHaveProperty('X-RateLimit-Remaining');
      }
      expect(responses['429']?.headers, key).toHaveProperty('Retry-After');
      if (usesBearer(op)) expect(responses['401']?.headers, key).toHaveProperty('WWW-Authenticate');
      // Interface A's errors all share one schema, referenced rather than repeated.
      if (path.startsWith('/api/v1/')) {
        expect(usesBearer(op), `${key}: bearerAuth`).toBe(true);
        for (const [status, response] of Object.entries(responses)) {
          if (Number(status) < 400) continue;
          expect(response.content?.['application/json']?.schema?.$ref, `${key} ${status}`).toBe(ERROR_REF);
        }
      }
    }
    expect(doc.components?.schemas).toHaveProperty('Error');
  });

  it('documents Idempotency-Key on every POST under /api/v1 (required only where it is), with Idempotent-Replayed on what it replays', () => {
    // A re-check fetches the live page again each time it is asked: replaying a stored answer
    // would hide the page as it is now, so it takes no Idempotency-Key, and says so.
    const repeatable = ['POST /api/v1/publisher/orders/{id}/recheck'];
    for (const key of repeatable) {
      const op = ops.find((o) => o.key === key)?.op;
      expect(op, key).toBeDefined();
      expect(op!.parameters?.some((p) => p.in === 'header' && p.name === 'idempotency-key'), key).toBe(false);
      expect(op!.description, key).toMatch(/No Idempotency-Key/);
    }
    const posts = ops.filter(({ key, path, method }) => method === 'post' && path.startsWith('/api/v1/') && !repeatable.includes(key));
    expect(posts.length).toBeGreaterThan(10);
    for (const { key, op } of posts) {
      const header = op.parameters?.find((p) => p.in === 'header' && p.name === 'idempotency-key');
      expect(header, key).toBeDefined();
      expect(header!.required ?? false, key).toBe(key === 'POST /api/v1/orders');
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        const replayed = /^2/.test(status) || status === '402' || status === '409';
        expect(Object.keys(response.headers ?? {}).includes('Idempotent-Replayed'), `${key} ${status}`).toBe(replayed);
      }
      // Only the operation that requires the key blames its absence.
      expect(/no Idempotency-Key/i.test(op.responses?.['400']?.description ?? ''), key).toBe(key === 'POST /api/v1/orders');
    }
  });

  it('documents 422 on every /api/v1 operation (unknown query parameters) and an optional body where none is needed', () => {
    for (const { key, path, op } of ops) {
      if (path.startsWith('/api/v1/')) expect(Object.keys(op.responses ?? {}), key).toContain('422');
    }
    const byId = (id: string) => ops.find((o) => o.op.operationId === id)!.op as Operation & { requestBody?: { required?: boolean } };
    for (const id of ['approvePlacement', 'approveDraft', 'cancelOrder', 'publisherAccept', 'validatePurchaseCode']) {
      expect(byId(id).requestBody?.required, id).toBe(false);
    }
    expect(byId('validatePurchaseCode').parameters).toEqual(expect.arrayContaining([expect.objectContaining({ in: 'query', name: 'purchase_code' })]));
  });

  it('passes the Redocly linter (recommended rules) without errors', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'openapi-lint-'));
    try {
      await writeFile(join(dir, 'openapi.json'), JSON.stringify(doc));
      // No rule is switched off. The document has no remote $ref, so the linter needs no network.
      await writeFile(join(dir, 'redocly.yaml'), 'extends:\n  - recommended\ntelemetry: off\n');
      const bin = fileURLToPath(new URL('../../node_modules/.bin/redocly', import.meta.url));
      const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_NOTIFICATIONS: 'true', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
      const args = ['lint', join(dir, 'openapi.json'), '--config', join(dir, 'redocly.yaml'), '--format=json'];
      // The CLI exits 1 when it finds errors; its JSON report is on stdout either way.
      const stdout = await promisify(execFile)(bin, args, { env, cwd: dir, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 }).then(
        (r) => r.stdout,
        (err: { stdout?: string }) => err.stdout ?? '',
      );
      const report = JSON.parse(stdout) as {
        totals: { errors: number; warnings: number };
        problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
      };
      const show = (p: (typeof report.problems)[number]) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`;
      expect(report.problems.filter((p) => p.severity === 'error').map(show)).toEqual([]);
      expect(report.totals.errors).toBe(0);
      // The only warning accepted: a public operation (health, readiness) has no 4xx answer to
      // document. Any other warning is a defect in the document, to be fixed there.
      const publicResponses = new Set(
        ops.filter((o) => isPublic(o.op)).map((o) => `#/paths/${o.path.replaceAll('~', '~0').replaceAll('/', '~1')}/${o.method}/responses`),
      );
      const unexpected = report.problems.filter(
        (p) => !(p.ruleId === 'operation-4xx-response' && publicResponses.has(p.location[0]?.pointer ?? '')),
      );
      expect(unexpected.map(show)).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('is served without a key', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();
  });

  it('matches what the app sends: every bearer route answers 401 without a key, with the documented headers', async () => {
    // Authentication is checked before the body, the path id or the Idempotency-Key (docs/http.md).
    for (const { key, path, method, op } of ops.filter((o) => usesBearer(o.op))) {
      const res = await h.app.inject({ method: method.toUpperCase() as 'GET', url: path.replace(/\{\w+\}/g, '1') });
      expect(res.statusCode, key).toBe(401);
      for (const header of Object.keys(op.responses?.['401']?.headers ?? {})) {
        expect(res.headers[header.toLowerCase()], `${key}: ${header}`).toBeDefined();
      }
      expect(res.json(), key).toMatchObject({ code: 'unauthenticated', request_id: res.headers['x-request-id'] });
    }
  });
});

describe('GET /docs — happy', () => {
  it('serves the reference page without a key', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/docs' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('swagger-ui');
    const init = await h.app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
    expect(init.statusCode).toBe(200);
  });

  it('loads its document from /openapi.json', async () => {
    // The page fetches <prefix>/json, which sends it to the one document.
    const res = await h.app.inject({ method: 'GET', url: '/docs/json' });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('/openapi.json');
  });
});
