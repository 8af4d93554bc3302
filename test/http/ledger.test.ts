import { describe, expect, it } from 'vitest';
import { setupApp } from '../helpers/app.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';

const h = await setupApp();
const ws = await workspaceWithKeys(h.database.pool, { balanceCents: 5_000 });

describe('GET /api/v1/ledger — happy', () => {
  it('lists the top-up as a positive entry on available, newest first, paginated', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/api/v1/ledger?per_page=10', headers: bearer(ws.readKey) });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.data).toEqual([
      {
        id: expect.any(Number),
        transaction_id: expect.any(Number),
        account: 'available',
        amount: 5_000,
        amount_formatted: '$50.00',
        kind: 'top_up',
        order_id: null,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      },
    ]);
    expect(body.meta).toMatchObject({ current_page: 1, from: 1, to: 1, total: 1, last_page: 1, per_page: 10 });
    expect(body.links.next).toBeNull();
    expect(body.links.first).toMatch(/\/api\/v1\/ledger\?per_page=10&page=1$/);
  });

  it('a page past the end is 200 with empty data and correct meta', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/api/v1/ledger?page=5', headers: bearer(ws.readKey) });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual([]);
    expect(res.json().meta).toMatchObject({ current_page: 5, from: null, to: null, total: 1, last_page: 1 });
  });
});

describe('GET /api/v1/ledger — errors', () => {
  const bad: [string, string][] = [
    ['per_page=0', 'per_page'],
    ['per_page=101', 'per_page'],
    ['per_page=-1', 'per_page'],
    ['per_page=1.5', 'per_page'],
    ['per_page=abc', 'per_page'],
    ['page=0', 'page'],
    ['page=1e3', 'page'],
  ];
  for (const [query, field] of bad) {
    it(`422 names ${field} for ${query}`, async () => {
      const res = await h.app.inject({ method: 'GET', url: `/api/v1/ledger?${query}`, headers: bearer(ws.readKey) });
      expect(res.statusCode).toBe(422);
      const body = res.json();
      expect(body.code).toBe('invalid_input');
      expect(Object.keys(body.errors)).toEqual([field]);
      expect(body.errors[field][0]).toMatch(/integer between/);
    });
  }

  it('422 names every bad field at once', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/api/v1/ledger?page=0&per_page=500', headers: bearer(ws.readKey) });
    expect(Object.keys(res.json().errors).sort()).toEqual(['page', 'per_page']);
  });
});

describe('GET /api/v1/ledger — security', () => {
  it('401 comes before 422', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/api/v1/ledger?per_page=0', remoteAddress: '10.3.3.3' });
    expect(res.statusCode).toBe(401);
  });

  it('shows only the caller workspace entries', async () => {
    const other = await workspaceWithKeys(h.database.pool, { balanceCents: 7_777 });
    const res = await h.app.inject({ method: 'GET', url: '/api/v1/ledger', headers: bearer(other.readKey) });
    expect(res.json().data.map((e: { amount: number }) => e.amount)).toEqual([7_777]);
  });
});
