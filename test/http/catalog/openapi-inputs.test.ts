import { describe, expect, it } from 'vitest';
import { setupApp } from '../../helpers/app.js';
import { openApiSchemas } from '../../helpers/openapi-schema.js';
import { seller } from './fixtures.js';

// Interface B takes its parameters from the query string, a form body or a JSON body, GET
// included, and the key also as a bearer token (docs/interface-b.md). The OpenAPI document must
// say so, so that a validating proxy or a generated client lets through what the server accepts:
// each way is sent to the server (200) and checked against the operation in the document.

const h = await setupApp();
const s = await seller(h.database);
const schemaAt = await openApiSchemas(h.app);
const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
  paths: Record<string, Record<string, { security: Record<string, string[]>[]; parameters?: { name: string; in: string; required?: boolean }[] }>>;
};

const operations = [
  { method: 'GET', path: '/api/account/details', params: {} },
  { method: 'GET', path: '/api/items/all', params: {} },
  { method: 'GET', path: '/api/items/item', params: { item_id: String(s.itemIds[0]) } },
  { method: 'POST', path: '/api/purchases/validation', params: { purchase_code: s.code } },
] as const;

const pointer = (path: string, method: string, type: string) =>
  `/paths/${path.replaceAll('/', '~1')}/${method.toLowerCase()}/requestBody/content/${type.replaceAll('/', '~1')}/schema`;

describe('Every seller API endpoint in the OpenAPI document: what the server accepts — happy', () => {
  it.each(operations)('$method $path: query, form body, JSON body and bearer key all answer 200 and match the document', async ({ method, path, params }) => {
    const op = doc.paths[path]![method.toLowerCase()]!;
    const key = s.readKey;
    // Query string: the apiKeyQuery scheme.
    const query = new URLSearchParams({ api_key: key, ...params }).toString();
    expect((await h.app.inject({ method, url: `${path}?${query}` })).statusCode).toBe(200);
    expect(op.security).toContainEqual({ apiKeyQuery: [] });
    // Bearer header: the apiKeyBearer scheme.
    const bearer = await h.app.inject({ method, url: `${path}?${new URLSearchParams(params).toString()}`, headers: { authorization: `Bearer ${key}` } });
    expect(bearer.statusCode).toBe(200);
    expect(op.security).toContainEqual({ apiKeyBearer: [] });
    // Every parameter in a body: the key is no scheme OpenAPI can name there, so `{}` stands for it,
    // no query parameter is required, and the body matches the operation's schema for its media type.
    expect(op.security).toContainEqual({});
    expect((op.parameters ?? []).filter((p) => p.in === 'query' && p.required)).toEqual([]);
    const form = { api_key: key, ...params };
    const asForm = await h.app.inject({ method, url: path, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(form).toString() });
    expect(asForm.statusCode, asForm.body).toBe(200);
    expect(schemaAt(pointer(path, method, 'application/x-www-form-urlencoded'))(form)).toEqual([]);
    const json = { api_key: key, ...Object.fromEntries(Object.entries(params).map(([k, v]) => [k, k === 'item_id' ? Number(v) : v])) };
    const asJson = await h.app.inject({ method, url: path, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(json) });
    expect(asJson.statusCode, asJson.body).toBe(200);
    expect(schemaAt(pointer(path, method, 'application/json'))(json)).toEqual([]);
  });
});

describe('GET /api/account/details, /api/items/all and /api/items/item: POST answers 405 — errors', () => {
  it('POST exists only for validation: the GET routes answer POST with 405', async () => {
    for (const path of ['/api/account/details', '/api/items/all', '/api/items/item']) {
      const res = await h.app.inject({ method: 'POST', url: path, payload: { api_key: s.readKey } });
      expect(res.statusCode, path).toBe(405);
      expect(doc.paths[path]!.post).toBeUndefined();
    }
  });
});
