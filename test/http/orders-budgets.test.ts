import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/db/client.js';
import { type BudgetLimits, createKey, rollKey, updateKey } from '../../src/domain/keys/key-service.js';
import { setupApp } from '../helpers/app.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';
import { expectLedgerInvariants } from '../helpers/ledger-invariants.js';
import { articleFor, DAY, FAILING_LIVE_CHECKS, orderKit } from '../helpers/orders.js';

// Spending budgets (docs/budgets.md) at their boundaries: one cent under a limit places, exactly
// at it places, one cent over is refused 403 budget_exceeded with the figures, for each window;
// the windows turn at UTC midnight and at the month's turn; a refund gives the budget back; a
// rolled key keeps what was spent; 50 placements over two app instances never pass it together.
const database = await createTestDatabase({ max: 12, connectTimeoutMs: 30_000 });
const h = await setupApp({ RATE_LIMIT_PER_MINUTE: 1_000_000 }, { database });
const second = createDatabase({ url: database.url, max: 12, connectTimeoutMs: 30_000 });
const h2 = await setupApp(
  { RATE_LIMIT_PER_MINUTE: 1_000_000 },
  { database: { ...second, url: database.url, name: database.name, drop: async () => {} } as TestDatabase, clock: h.clock },
);
afterAll(() => second.close());

const TARGET = 'https://buyer.example/';
let seq = 0;
const apps = [h, h2];
const place = (key: string, offerIds: number[], idem = `b-${++seq}`, app = 0) =>
  apps[app]!.app.inject({
    method: 'POST',
    url: '/api/v1/orders',
    headers: { ...bearer(key), 'idempotency-key': idem },
    payload: { offer_ids: offerIds, target_url: TARGET },
  });

/** A workspace with a spending key holding `limits`, and a publisher with one offer (price P). */
async function setup(limits: BudgetLimits, balanceCents = 10_000_000, offer: NonNullable<Parameters<typeof publisherWithOutlet>[1]>[number] = {}) {
  const p = await publisherWithOutlet(h.database, [{ publisher_price_cents: 10_000, ...offer }]);
  const ws = await workspaceWithKeys(h.database.pool, { balanceCents });
  const key = await createKey(h.database.pool, { workspaceId: ws.workspaceId, canPlaceOrders: true, limits });
  const o = p.offers[0]!;
  return { ws, key, offerId: o.id, P: o.price, publisherKey: p.publisherKey, domain: p.domain };
}

/** An order with the buyer's own article, so the publisher can publish it once accepted. */
const placeWithArticle = (key: string, offerId: number) =>
  h.app.inject({
    method: 'POST',
    url: '/api/v1/orders',
    headers: { ...bearer(key), 'idempotency-key': `a-${++seq}` },
    payload: { offer_ids: [offerId], target_url: TARGET, anchor_text: 'our product', content_title: 'Our product, reviewed', content: articleFor(TARGET) },
  });

async function orderCount(workspaceId: number) {
  const { rows } = await h.database.pool.query('SELECT count(*)::int AS n FROM orders WHERE workspace_id = $1', [workspaceId]);
  return rows[0].n as number;
}

const at = (iso: string) => h.clock.set(Date.parse(iso));

describe("POST /api/v1/orders: the key's per-order limit, at the boundary — errors", () => {
  it.each([
    [+1, 201],
    [0, 201],
    [-1, 403],
  ])('limit = price %+d cents: %i', async (delta, status) => {
    at('2027-03-10T12:00:00Z');
    const { P } = await setup({});
    const s = await setup({ orderLimitCents: P + delta });
    const res = await place(s.key.key, [s.offerId]);
    expect(res.statusCode, res.body).toBe(status);
    if (status === 403) {
      expect(res.json()).toMatchObject({
        code: 'budget_exceeded',
        budget: { window: 'order', limit_cents: P - 1, spent_cents: P, remaining_cents: 0, resets_at: null, limit_formatted: expect.any(String) },
      });
      expect(await orderCount(s.ws.workspaceId)).toBe(0);
    }
  });
});

describe.each([
  { window: 'day', field: 'dailyLimitCents', resets: '2027-03-11T00:00:00Z' },
  { window: 'month', field: 'monthlyLimitCents', resets: '2027-04-01T00:00:00Z' },
] as const)("POST /api/v1/orders: the key's per-$window limit, at the boundary — errors", ({ window, field, resets }) => {
  it.each([
    [+1, 201],
    [0, 201],
    [-1, 403],
  ])('limit = two orders %+d cents, after one order: second order %i', async (delta, status) => {
    at('2027-03-10T12:00:00Z');
    const probe = await setup({});
    const P = probe.P;
    const s = await setup({ [field]: 2 * P + delta });
    expect((await place(s.key.key, [s.offerId])).statusCode).toBe(201);
    const idem = `retry-${++seq}`;
    const res = await place(s.key.key, [s.offerId], idem);
    expect(res.statusCode, res.body).toBe(status);
    if (status === 403) {
      expect(res.json()).toMatchObject({
        code: 'budget_exceeded',
        budget: {
          window,
          limit_cents: 2 * P - 1,
          spent_cents: P,
          remaining_cents: P - 1,
          resets_at: resets,
          limit_formatted: expect.any(String),
          spent_formatted: expect.any(String),
          remaining_formatted: expect.any(String),
        },
      });
      expect(await orderCount(s.ws.workspaceId)).toBe(1);
      // The refusal was not recorded: with the limit raised, the same Idempotency-Key places.
      await updateKey(h.database.pool, s.key.id, { [field]: 2 * P }, h.clock);
      expect((await place(s.key.key, [s.offerId], idem)).statusCode).toBe(201);
    }
    await expectLedgerInvariants(h.database);
  });
});

describe('POST /api/v1/orders and POST /api/v1/orders/{id}/cancel: key budget windows and refunds — happy', () => {
  it('the day turns at UTC midnight, the month at the first of the month', async () => {
    at('2027-03-31T23:59:59Z');
    const { P } = await setup({});
    const s = await setup({ dailyLimitCents: P, monthlyLimitCents: 2 * P });
    expect((await place(s.key.key, [s.offerId])).statusCode).toBe(201);
    const refused = await place(s.key.key, [s.offerId]);
    expect(refused.json().budget).toMatchObject({ window: 'day', resets_at: '2027-04-01T00:00:00Z' });
    at('2027-04-01T00:00:00Z');
    expect((await place(s.key.key, [s.offerId])).statusCode).toBe(201);
    // A new month: the March order no longer counts, so April holds one more order.
    at('2027-04-02T00:00:00Z');
    expect((await place(s.key.key, [s.offerId])).statusCode).toBe(201);
    at('2027-04-03T00:00:00Z');
    expect((await place(s.key.key, [s.offerId])).json().budget).toMatchObject({ window: 'month', spent_cents: 2 * P, remaining_cents: 0 });
    at('2027-05-01T00:00:00Z');
    expect((await place(s.key.key, [s.offerId])).statusCode).toBe(201);
  });

  it('a cancelled order gives its budget back', async () => {
    at('2027-03-12T10:00:00Z');
    const { P } = await setup({});
    const s = await setup({ dailyLimitCents: P });
    const first = await place(s.key.key, [s.offerId]);
    expect(first.statusCode).toBe(201);
    expect((await place(s.key.key, [s.offerId])).statusCode).toBe(403);
    const id = first.json().data[0].id;
    const cancel = await h.app.inject({ method: 'POST', url: `/api/v1/orders/${id}/cancel`, headers: { ...bearer(s.key.key), 'idempotency-key': `c-${++seq}` } });
    expect(cancel.statusCode, cancel.body).toBe(200);
    expect((await place(s.key.key, [s.offerId])).statusCode).toBe(201);
    await expectLedgerInvariants(h.database);
  });

  // Every state an order is refunded in before completion, reached the way it happens: the
  // publisher declines; the sweep expires an order nobody accepted; a completed placement whose
  // link is lost and not restored by its deadline is refunded by the sweep.
  const kit = orderKit(h);
  const refundedBy = {
    declined: async (id: number, s: Awaited<ReturnType<typeof setup>>) => {
      expect((await kit.pub(s.publisherKey, `${id}/decline`, { reason: 'Not our topic' })).statusCode).toBe(200);
    },
    expired: async () => {
      h.clock.advance(h.config.ORDER_RESPOND_HOURS * 3_600_000 + 1000);
      expect(await kit.sweep()).toMatchObject({ expired: 1 });
    },
    link_refunded: async (id: number, s: Awaited<ReturnType<typeof setup>>) => {
      expect((await kit.pub(s.publisherKey, `${id}/accept`)).json().data.status).toBe('publishing');
      expect((await kit.pub(s.publisherKey, `${id}/publish`, { live_url: `https://${s.domain}/post` })).json().data.status).toBe('live_review');
      expect((await kit.buyer(s.key.key, `${id}/approve`)).json().data.status).toBe('completed');
      expect(await kit.recordLiveCheck(id, FAILING_LIVE_CHECKS)).toBe('lost');
      h.clock.advance(h.config.LINK_RESTORE_DAYS * DAY + 1000);
      // The check due at restore_by finds it still gone; then the sweep refunds.
      await kit.recordLiveCheck(id, FAILING_LIVE_CHECKS);
      expect(await kit.sweep()).toMatchObject({ link_refunded: 1 });
    },
  };
  it.each(Object.keys(refundedBy) as (keyof typeof refundedBy)[])('an order %s gives its budget back', async (state) => {
    // Early in a month, so the deadlines passed stay in the month's window.
    at('2027-03-02T10:00:00Z');
    const { P } = await setup({});
    const s = await setup({ monthlyLimitCents: P }, 10_000_000, { content_by: 'buyer' });
    const first = await placeWithArticle(s.key.key, s.offerId);
    expect(first.statusCode, first.body).toBe(201);
    expect((await place(s.key.key, [s.offerId])).json().code).toBe('budget_exceeded');
    const id = first.json().data[0].id as number;
    await refundedBy[state](id, s);
    expect((await h.app.inject({ url: `/api/v1/orders/${id}`, headers: bearer(s.key.key) })).json().data.status).toBe(state);
    expect(new Date(h.clock.now()).toISOString().slice(0, 7)).toBe('2027-03');
    const again = await place(s.key.key, [s.offerId]);
    expect(again.statusCode, again.body).toBe(201);
    await expectLedgerInvariants(h.database);
  });

  it('a placement that succeeded replays after the budget is spent', async () => {
    at('2027-03-12T10:00:00Z');
    const { P } = await setup({});
    const s = await setup({ dailyLimitCents: P });
    const first = await place(s.key.key, [s.offerId], 'once-1');
    expect(first.statusCode).toBe(201);
    const again = await place(s.key.key, [s.offerId], 'once-1');
    expect(again.statusCode).toBe(201);
    expect(again.json()).toEqual(first.json());
    expect(await orderCount(s.ws.workspaceId)).toBe(1);
  });

  it('a rolled key keeps the budget and what was spent', async () => {
    at('2027-03-12T10:00:00Z');
    const { P } = await setup({});
    const s = await setup({ dailyLimitCents: 2 * P });
    expect((await place(s.key.key, [s.offerId])).statusCode).toBe(201);
    const rolled = await rollKey(h.database.pool, { workspaceId: s.ws.workspaceId }, s.key.id, 1, h.clock);
    expect((await place(rolled.key, [s.offerId])).statusCode).toBe(201);
    const refused = await place(rolled.key, [s.offerId]);
    expect(refused.json()).toMatchObject({ code: 'budget_exceeded', budget: { window: 'day', spent_cents: 2 * P } });
    // The old key, still in its grace hour, shares the same budget; so does a key rolled twice.
    expect((await place(s.key.key, [s.offerId])).statusCode).toBe(403);
    const twice = await rollKey(h.database.pool, { workspaceId: s.ws.workspaceId }, rolled.id, 0, h.clock);
    expect((await place(twice.key, [s.offerId])).json().budget).toMatchObject({ spent_cents: 2 * P, remaining_cents: 0 });
    // A limit changed on the newest key is the chain's.
    await updateKey(h.database.pool, twice.id, { dailyLimitCents: 3 * P }, h.clock);
    expect((await place(twice.key, [s.offerId])).statusCode).toBe(201);
  });

  it('one request for several offers counts them all', async () => {
    at('2027-03-12T10:00:00Z');
    const { P } = await setup({});
    const s = await setup({ dailyLimitCents: 2 * P - 1 });
    const other = await setup({});
    const res = await place(s.key.key, [s.offerId, other.offerId]);
    expect(res.json()).toMatchObject({ code: 'budget_exceeded', budget: { window: 'day', spent_cents: 0 } });
  });
});

describe('POST /api/v1/orders: approval_required, then the budget, then 402 — errors', () => {
  it('approval_required comes before the budget, the budget before 402', async () => {
    at('2027-03-12T10:00:00Z');
    const { P } = await setup({});
    const s = await setup({ orderLimitCents: P - 1 }, P - 1);
    expect((await place(s.key.key, [s.offerId])).json().code).toBe('budget_exceeded');
    await h.database.pool.query('UPDATE workspaces SET max_order_cents = $2 WHERE id = $1', [s.ws.workspaceId, P - 1]);
    expect((await place(s.key.key, [s.offerId])).json().code).toBe('approval_required');
  });
});

describe('POST /api/v1/orders: the key.budget_exhausted event — happy', () => {
  const exhaustedEvents = async (workspaceId: number) =>
    (await h.database.pool.query(`SELECT data FROM events WHERE type = 'key.budget_exhausted' AND workspace_id = $1 ORDER BY id`, [workspaceId])).rows.map((r) => r.data);

  it('once per window, when the remaining reaches zero; not again after a refund in the same window', async () => {
    at('2027-03-20T10:00:00Z');
    const { P } = await setup({});
    const s = await setup({ dailyLimitCents: 2 * P, monthlyLimitCents: 10 * P });
    expect((await place(s.key.key, [s.offerId])).statusCode).toBe(201);
    expect(await exhaustedEvents(s.ws.workspaceId)).toEqual([]);
    const second = await place(s.key.key, [s.offerId]);
    expect(second.statusCode).toBe(201);
    expect(await exhaustedEvents(s.ws.workspaceId)).toEqual([
      expect.objectContaining({ key: { id: s.key.id, name: 'Spending key', prefix: s.key.prefix }, window: 'day', limit_cents: 2 * P, spent_cents: 2 * P, remaining_cents: 0, resets_at: '2027-03-21T00:00:00Z' }),
    ]);
    const id = second.json().data[0].id;
    expect((await h.app.inject({ method: 'POST', url: `/api/v1/orders/${id}/cancel`, headers: { ...bearer(s.key.key), 'idempotency-key': `c-${++seq}` } })).statusCode).toBe(200);
    expect((await place(s.key.key, [s.offerId])).statusCode).toBe(201);
    expect(await exhaustedEvents(s.ws.workspaceId)).toHaveLength(1);
    at('2027-03-21T00:00:00Z');
    expect((await place(s.key.key, [s.offerId])).statusCode).toBe(201);
    expect((await place(s.key.key, [s.offerId])).statusCode).toBe(201);
    expect((await exhaustedEvents(s.ws.workspaceId)).map((e) => `${e.window} ${e.resets_at}`)).toEqual(['day 2027-03-21T00:00:00Z', 'day 2027-03-22T00:00:00Z']);
  });

  it('no event for a window that is not run out, nor for a key without limits', async () => {
    at('2027-03-20T10:00:00Z');
    const { P } = await setup({});
    const s = await setup({ dailyLimitCents: 2 * P + 1 });
    expect((await place(s.key.key, [s.offerId])).statusCode).toBe(201);
    expect((await place(s.key.key, [s.offerId])).statusCode).toBe(201);
    expect(await exhaustedEvents(s.ws.workspaceId)).toEqual([]);
  });
});

describe('POST /api/v1/orders: a key budget under 50 concurrent placements — happy', () => {
  it('50 concurrent placements by one key over two app instances: exactly k pass', { timeout: 120_000 }, async () => {
    at('2027-03-15T10:00:00Z');
    const K = 7;
    const { P } = await setup({});
    const s = await setup({ dailyLimitCents: K * P + P - 1 });
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => place(s.key.key, [s.offerId], `race-${i}`, i % 2)));
    const codes = answers.map((a) => a.statusCode);
    expect(codes.filter((c) => c === 201)).toHaveLength(K);
    expect(codes.filter((c) => c !== 201 && c !== 403), codes.join(',')).toEqual([]);
    expect(await orderCount(s.ws.workspaceId)).toBe(K);
    const { rows } = await h.database.pool.query('SELECT COALESCE(sum(price), 0)::int AS spent FROM orders WHERE placed_by_key_id = $1', [s.key.id]);
    expect(rows[0].spent).toBe(K * P);
    // The key's own view agrees: what GET /me says it spent today.
    const me = await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(s.key.key) });
    expect(me.json().data.key.budget.day).toMatchObject({ spent_cents: K * P, remaining_cents: P - 1 });
    await expectLedgerInvariants(h.database);
  });
});
