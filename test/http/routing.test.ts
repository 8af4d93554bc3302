import { describe, expect, it } from 'vitest';
import { setupApp } from '../helpers/app.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';

// Interface A's routing: list endpoints take each query parameter once, and only the ones they
// know (a misspelt or bracketed filter would otherwise widen the list without a word); a known
// path asked with another method is a 405.
const h = await setupApp();
const ws = await workspaceWithKeys(h.database.pool);
const get = (url: string) => h.app.inject({ method: 'GET', url, headers: bearer(ws.readKey) });

describe('Every /api/v1 route: unknown or repeated query parameters — errors', () => {
  it('an unknown one is a 422 naming it', async () => {
    for (const [url, name] of [
      ['/api/v1/outlets?type[]=blog', 'type[]'],
      ['/api/v1/outlets?countries=DE', 'countries'],
      ['/api/v1/ledger?kind=top_up', 'kind'],
      ['/api/v1/orders?state=completed', 'state'],
      ['/api/v1/outlets?page[size]=2', 'page[size]'],
    ] as const) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(422);
      expect(res.json().errors, url).toEqual({ [name]: ['is not a parameter of this endpoint'] });
    }
  });

  it('a route that names none takes none: a made-up flag on a POST spends nothing', async () => {
    const spender = await workspaceWithKeys(h.database.pool, { balanceCents: 100_000 });
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/v1/orders?dry_run=true',
      headers: { ...bearer(spender.spendKey), 'idempotency-key': 'dry-run-1' },
      payload: { offer_ids: [1], target_url: 'https://x.example/' },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors).toEqual({ dry_run: ['is not a parameter of this endpoint'] });
    expect((await get('/api/v1/me?verbose=1')).json().errors).toEqual({ verbose: ['is not a parameter of this endpoint'] });
    expect((await get('/api/v1/me')).statusCode).toBe(200);
  });

  it('one given twice is a 422 saying so', async () => {
    for (const [url, name] of [
      ['/api/v1/outlets?per_page=1&per_page=2', 'per_page'],
      ['/api/v1/outlets?q=a&q=b', 'q'],
      ['/api/v1/orders?status=completed&status=cancelled', 'status'],
    ] as const) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(422);
      expect(res.json().errors, url).toEqual({ [name]: ['is given more than once'] });
    }
  });
});

describe('Every /api/v1 route: known query parameters — happy', () => {
  it('known ones still work', async () => {
    expect((await get('/api/v1/outlets?q=travel&per_page=2&page=1&sort=-traffic')).statusCode).toBe(200);
    expect((await get('/api/v1/ledger?per_page=5')).statusCode).toBe(200);
    expect((await get('/api/v1/orders?status=completed&your_turn=false')).statusCode).toBe(200);
  });
});

describe('Every /api/v1 path: another method is 405 with Allow — errors', () => {
  it('a known path asked with another method is a 405 with Allow, in Interface A shape', async () => {
    for (const [method, url, allow] of [
      ['DELETE', '/api/v1/outlets', 'GET, HEAD'],
      ['POST', '/api/v1/me', 'GET, HEAD'],
      ['GET', '/api/v1/plan', 'POST'],
      ['GET', '/api/v1/orders/5/approve', 'POST'],
      ['OPTIONS', '/api/v1/outlets/', 'GET, HEAD'],
      ['PATCH', '/api/v1/publisher/orders/7', 'GET, HEAD'],
    ] as const) {
      const res = await h.app.inject({ method, url, headers: bearer(ws.readKey) });
      expect(res.statusCode, `${method} ${url}`).toBe(405);
      expect(res.headers.allow, `${method} ${url}`).toBe(allow);
      expect(res.json()).toMatchObject({ code: 'method_not_allowed', request_id: res.headers['x-request-id'] });
    }
    // An unknown path is still a 404.
    expect((await h.app.inject({ method: 'DELETE', url: '/api/v1/nothing', headers: bearer(ws.readKey) })).statusCode).toBe(404);
  });
});
