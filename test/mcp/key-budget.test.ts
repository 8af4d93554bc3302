import { describe, expect, it } from 'vitest';
import { type BudgetLimits, createKey, updateKey } from '../../src/domain/keys/key-service.js';
import { setupApp } from '../helpers/app.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';
import { connect, fails, listen, ok } from './helpers.js';

// A key's budget, visible before spending (docs/budgets.md): GET /me and get-balance show it, a
// place-orders quote shows what is left after the order and is refused (no token) over it; the
// confirming call is refused too when the budget changed after the quote. MCP at the boundaries.
const h = await setupApp();
const url = await listen(h);
const TARGET = 'https://buyer.example/';
h.clock.set(Date.parse('2027-06-15T10:00:00Z'));

async function setup(limits: BudgetLimits, expiresAt: Date | null = null) {
  const p = await publisherWithOutlet(h.database, [{ publisher_price_cents: 10_000 }]);
  const ws = await workspaceWithKeys(h.database.pool);
  const key = await createKey(h.database.pool, { workspaceId: ws.workspaceId, canPlaceOrders: true, limits, expiresAt }, h.clock);
  const offer = p.offers[0]!;
  return { ws, key, P: offer.price, args: { offer_ids: [offer.id], target_url: TARGET } };
}
const me = async (key: string) => (await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(key) })).json().data;

describe("GET /api/v1/me and MCP get-balance: the key's budget — happy", () => {
  it('null for a key without limits or expiry', async () => {
    const s = await setup({});
    expect((await me(s.key.key)).key.budget).toBeNull();
    const client = await connect(url, s.key.key);
    expect((await ok<{ key: { budget: unknown } }>(client, 'get-balance')).key.budget).toBeNull();
  });

  it('the windows with what was spent, the same in both', async () => {
    const s = await setup({ orderLimitCents: 20_000, dailyLimitCents: 50_000 }, new Date('2027-07-01T00:00:00Z'));
    const placed = await h.app.inject({ method: 'POST', url: '/api/v1/orders', headers: { ...bearer(s.key.key), 'idempotency-key': 'v-1' }, payload: s.args });
    expect(placed.statusCode, placed.body).toBe(201);
    const budget = (await me(s.key.key)).key.budget;
    expect(budget).toEqual({
      order_limit_cents: 20_000,
      order_limit_formatted: '$200.00',
      day: {
        limit_cents: 50_000,
        spent_cents: s.P,
        remaining_cents: 50_000 - s.P,
        resets_at: '2027-06-16T00:00:00Z',
        limit_formatted: '$500.00',
        spent_formatted: '$120.00',
        remaining_formatted: '$380.00',
      },
      month: null,
      expires_at: '2027-07-01T00:00:00Z',
    });
    const client = await connect(url, s.key.key);
    expect((await ok<{ key: { budget: unknown } }>(client, 'get-balance')).key.budget).toEqual(budget);
  });
});

describe.each([
  { window: 'order', field: 'orderLimitCents', before: 0 },
  { window: 'day', field: 'dailyLimitCents', before: 1 },
  { window: 'month', field: 'monthlyLimitCents', before: 1 },
] as const)("MCP place-orders: the key's $window limit, at the boundary — errors", ({ window, field, before }) => {
  it.each([+1, 0, -1])('limit = what it allows %+d cents', async (delta) => {
    const probe = await setup({});
    const limit = (before + 1) * probe.P + delta;
    const s = await setup({ [field]: limit });
    const client = await connect(url, s.key.key);
    for (let i = 0; i < before; i++) {
      const q = await ok<{ confirmation_token: string }>(client, 'place-orders', s.args);
      expect(await ok(client, 'place-orders', { ...s.args, confirmation_token: q.confirmation_token })).toMatchObject({ stage: 'done' });
    }
    if (delta < 0) {
      const body = await fails(client, 'place-orders', s.args, 'budget_exceeded');
      expect(body.budget).toMatchObject({
        window,
        limit_cents: limit,
        spent_cents: window === 'order' ? s.P : before * s.P,
        remaining_cents: window === 'order' ? 0 : s.P - 1,
      });
      return;
    }
    const q = await ok<{ confirmation_token: string; quote: { budget: Record<string, { remaining_cents: number } | number | null> } }>(client, 'place-orders', s.args);
    if (window !== 'order') expect(q.quote.budget[window]).toMatchObject({ remaining_cents: delta });
    else expect(q.quote.budget.order_limit_cents).toBe(limit);
    expect(await ok(client, 'place-orders', { ...s.args, confirmation_token: q.confirmation_token })).toMatchObject({ stage: 'done' });
  });
});

describe('MCP place-orders: a limit lowered after the quote — errors', () => {
  it('a confirmation after the limit was lowered is refused with budget_exceeded', async () => {
    const probe = await setup({});
    const s = await setup({ dailyLimitCents: probe.P });
    const client = await connect(url, s.key.key);
    const q = await ok<{ confirmation_token: string }>(client, 'place-orders', s.args);
    await updateKey(h.database.pool, s.key.id, { dailyLimitCents: probe.P - 1 }, h.clock);
    const body = await fails(client, 'place-orders', { ...s.args, confirmation_token: q.confirmation_token }, 'budget_exceeded');
    expect(body.budget).toMatchObject({ window: 'day', limit_cents: probe.P - 1, spent_cents: 0 });
  });
});
