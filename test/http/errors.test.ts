import { describe, expect, it } from 'vitest';
import { setupApp } from '../helpers/app.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';

const h = await setupApp();
const ws = await workspaceWithKeys(h.database.pool, { balanceCents: 5_000 });

describe('Unknown /api/v1 routes and methods: 404 and 405 — errors', () => {
  it('answer 404 in the error shape', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/api/v1/does-not-exist', headers: bearer(ws.readKey) });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ message: expect.any(String), code: 'not_found', request_id: res.headers['x-request-id'] });
  });

  it('answer 405 with Allow for a wrong method on a known path (test/http/routing.test.ts has more)', async () => {
    const res = await h.app.inject({ method: 'DELETE', url: '/api/v1/me', headers: bearer(ws.readKey) });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
    expect(res.json().code).toBe('method_not_allowed');
  });
});
