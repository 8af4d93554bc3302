import { describe, expect, it } from 'vitest';
import { approvalRequests } from '../../src/domain/approvals/decide.js';
import { expireApprovals } from '../../src/domain/approvals/expiry.js';
import { createKey } from '../../src/domain/keys/key-service.js';
import { durationsFrom } from '../../src/domain/orders/states.js';
import { addMember } from '../../src/domain/users/memberships.js';
import { createUser } from '../../src/domain/users/user-service.js';
import { setupApp } from '../helpers/app.js';
import { bearer } from '../helpers/fixtures.js';
import { expectLedgerInvariants } from '../helpers/ledger-invariants.js';
import { orderKit } from '../helpers/orders.js';

// Approval requests (docs/approvals.md) through the API, and the person's decisions through the
// domain call the console makes: a key that needs a person waits (202, nothing held); an owner
// approves (the orders placed, held, on the key's budget), declines, or the request expires; the
// agent may cancel; every refusal named.
const h = await setupApp({ RATE_LIMIT_PER_MINUTE: 1_000_000 });
const k = orderKit(h);
const pool = h.database.pool;
const durations = durationsFrom(h.config);
const deps = { pool, clock: h.clock, durations, baseUrl: 'http://console.test' };
const TARGET = 'https://buyer.example/app';
let people = 0;

async function person(workspaceId: number, role: 'owner' | 'member' | 'viewer') {
  const user = await createUser(pool, { email: `p${++people}-${Date.now()}@example.com`, name: `Person ${people}`, password: 'correct horse battery' });
  await addMember(pool, { workspaceId }, user.id, role);
  return { workspaceId, userId: user.id, name: user.name };
}

/** A workspace whose spending key needs a person's approval, an owner, and a publisher's offer. */
async function setup(opts: { balance?: number; price?: number } = {}) {
  const { ws, p } = await k.setup([{ publisher_price_cents: opts.price ?? 10_000 }], opts.balance ?? 1_000_000);
  await pool.query('UPDATE api_keys SET needs_approval = true WHERE id = $1', [ws.spendKeyId]);
  const owner = await person(ws.workspaceId, 'owner');
  return { ws, p, offer: p.offers[0]!, owner };
}

const body = (offerId: number, extra: Record<string, unknown> = {}) => ({ offer_ids: [offerId], target_url: TARGET, anchor_text: 'our app', ...extra });
const counts = async (workspaceId: number) => {
  const { rows } = await pool.query(
    `SELECT (SELECT count(*)::int FROM orders WHERE workspace_id = $1) AS orders,
            (SELECT count(*)::int FROM approval_requests WHERE workspace_id = $1) AS requests,
            (SELECT count(*)::int FROM ledger_transactions t WHERE t.order_id IN (SELECT id FROM orders WHERE workspace_id = $1)) AS postings`,
    [workspaceId],
  );
  return rows[0] as { orders: number; requests: number; postings: number };
};
const eventTypes = async (workspaceId: number) =>
  (await pool.query(`SELECT type FROM events WHERE workspace_id = $1 ORDER BY id`, [workspaceId])).rows.map((r) => r.type as string);
const get = (key: string, url: string) => h.app.inject({ method: 'GET', url, headers: bearer(key) });

describe('POST /api/v1/orders with a key that needs approval', () => {
  it('answers 202 with the approval request and its Location; nothing is held or posted', async () => {
    const { ws, offer } = await setup();
    const before = await k.balances(ws.workspaceId);
    const res = await k.place(ws.spendKey, body(offer.id));
    expect(res.statusCode, res.body).toBe(202);
    const data = res.json().data;
    expect(res.headers.location).toBe(`/api/v1/approval-requests/${data.id}`);
    expect(data).toMatchObject({
      status: 'pending',
      action: 'place_orders',
      total_cents: offer.price,
      total_formatted: expect.stringContaining('$'),
      requested_by: { key_id: ws.spendKeyId, kind: 'key' },
      decided_by: null,
      decided_at: null,
      decline_reason: null,
      order_ids: [],
      failure: null,
    });
    expect(data.items).toEqual([expect.objectContaining({ offer_id: offer.id, order_id: null, price: offer.price, target_url: TARGET, anchor_text: 'our app' })]);
    expect(data.approve_url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:\\d+/app/w/${ws.workspaceId}/approvals/${data.id}$`));
    expect(Date.parse(data.expires_at) - Date.parse(data.requested_at)).toBe(72 * 3_600_000);
    expect(await k.balances(ws.workspaceId)).toEqual(before);
    expect(await counts(ws.workspaceId)).toEqual({ orders: 0, requests: 1, postings: 0 });
    expect(await eventTypes(ws.workspaceId)).toEqual(['approval_request.created']);
    const got = await get(ws.readKey, res.headers.location as string);
    expect(got.json().data).toEqual(data);
  });

  it('a replayed Idempotency-Key answers the same 202, byte for byte; the same body with a new key answers the same request', async () => {
    const { ws, offer } = await setup();
    const first = await k.place(ws.spendKey, body(offer.id), 'idem-1');
    const replay = await k.place(ws.spendKey, body(offer.id), 'idem-1');
    expect(replay.statusCode).toBe(202);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(first.body);
    const again = await k.place(ws.spendKey, body(offer.id), 'idem-2');
    expect(again.statusCode).toBe(202);
    expect(again.json().data.id).toBe(first.json().data.id);
    const other = await k.place(ws.spendKey, body(offer.id, { anchor_text: 'another anchor' }), 'idem-3');
    expect(other.json().data.id).not.toBe(first.json().data.id);
    expect((await counts(ws.workspaceId)).requests).toBe(2);
    expect(await eventTypes(ws.workspaceId)).toEqual(['approval_request.created', 'approval_request.created']);
  });

  it('50 identical requests at once make one request', async () => {
    const { ws, offer } = await setup();
    const all = await Promise.all(Array.from({ length: 50 }, (_, i) => k.place(ws.spendKey, body(offer.id), `same-${i}`)));
    expect(all.map((r) => r.statusCode)).toEqual(Array(50).fill(202));
    expect(new Set(all.map((r) => r.json().data.id)).size).toBe(1);
    expect(await counts(ws.workspaceId)).toEqual({ orders: 0, requests: 1, postings: 0 });
  });

  it('passes every check placement makes first: 402 for a balance that could not pay now, 403 over the key budget or the hard cap', async () => {
    const { ws, offer } = await setup({ balance: 5_000 });
    const poor = await k.place(ws.spendKey, body(offer.id));
    expect(poor.statusCode).toBe(402);
    expect(poor.json().code).toBe('insufficient_balance');
    const { ws: w2, offer: o2 } = await setup();
    const limited = await createKey(pool, { workspaceId: w2.workspaceId, canPlaceOrders: true, limits: { orderLimitCents: o2.price - 1 } });
    await pool.query('UPDATE api_keys SET needs_approval = true WHERE id = $1', [limited.id]);
    const over = await k.place(limited.key, body(o2.id));
    expect(over.statusCode).toBe(403);
    expect(over.json().code).toBe('budget_exceeded');
    await pool.query('UPDATE workspaces SET max_order_cents = $2 WHERE id = $1', [w2.workspaceId, o2.price - 1]);
    const capped = await k.place(w2.spendKey, body(o2.id));
    expect(capped.statusCode).toBe(403);
    expect(capped.json().code).toBe('approval_required');
    expect((await counts(ws.workspaceId)).requests + (await counts(w2.workspaceId)).requests).toBe(0);
  });
});

describe('the workspace rule approval_above_cents', () => {
  it('places at or under it; above it the order waits for a person', async () => {
    const { ws, offer } = await setup();
    await pool.query('UPDATE api_keys SET needs_approval = false WHERE id = $1', [ws.spendKeyId]);
    await pool.query('UPDATE workspaces SET approval_above_cents = $2 WHERE id = $1', [ws.workspaceId, offer.price]);
    expect((await k.place(ws.spendKey, body(offer.id))).statusCode).toBe(201);
    await pool.query('UPDATE workspaces SET approval_above_cents = $2 WHERE id = $1', [ws.workspaceId, offer.price - 1]);
    const above = await k.place(ws.spendKey, body(offer.id));
    expect(above.statusCode, above.body).toBe(202);
    expect(above.json().data.total_cents).toBe(offer.price);
  });
});

describe('reading and withdrawing', () => {
  it('lists pending first and filters by status; another workspace reads 404; a key withdraws, once', async () => {
    const { ws, offer, owner } = await setup();
    const a = (await k.place(ws.spendKey, body(offer.id, { anchor_text: 'a' }))).json().data;
    const b = (await k.place(ws.spendKey, body(offer.id, { anchor_text: 'b' }))).json().data;
    await approvalRequests.decline(deps, owner, a.id, 'not now');
    const list = (await get(ws.readKey, '/api/v1/approval-requests')).json();
    expect(list.data.map((r: { id: number }) => r.id)).toEqual([b.id, a.id]);
    expect(list.meta?.total ?? list.total).toBe(2);
    const pending = (await get(ws.readKey, '/api/v1/approval-requests?status=pending')).json();
    expect(pending.data.map((r: { id: number }) => r.id)).toEqual([b.id]);
    expect((await get(ws.readKey, '/api/v1/approval-requests?status=sideways')).statusCode).toBe(422);

    const other = await setup();
    expect((await get(other.ws.readKey, `/api/v1/approval-requests/${b.id}`)).statusCode).toBe(404);
    expect((await h.app.inject({ method: 'POST', url: `/api/v1/approval-requests/${b.id}/cancel`, headers: bearer(other.ws.spendKey) })).statusCode).toBe(404);

    const cancelled = await h.app.inject({ method: 'POST', url: `/api/v1/approval-requests/${b.id}/cancel`, headers: bearer(ws.readKey) });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    expect(cancelled.json().data).toMatchObject({ status: 'cancelled', decided_by: null });
    const twice = await h.app.inject({ method: 'POST', url: `/api/v1/approval-requests/${b.id}/cancel`, headers: bearer(ws.readKey) });
    expect(twice.statusCode).toBe(409);
    expect(twice.json()).toMatchObject({ code: 'conflict', status: 'cancelled' });
    await expect(approvalRequests.approve(deps, owner, b.id)).rejects.toMatchObject({ code: 'conflict' });
    expect(await counts(ws.workspaceId)).toMatchObject({ orders: 0 });
    expect(await eventTypes(ws.workspaceId)).toEqual([
      'approval_request.created',
      'approval_request.created',
      'approval_request.declined',
      'approval_request.cancelled',
    ]);
  });
});

describe('a person decides', () => {
  it('approve: the orders are placed by the key that asked, held, counted on its budget, with the approval recorded', async () => {
    const { ws, offer, owner, p } = await setup();
    // A daily budget that fits one order: the second approval goes over it, and is not refused.
    const budgeted = await createKey(pool, { workspaceId: ws.workspaceId, canPlaceOrders: true, limits: { dailyLimitCents: Math.floor(offer.price * 1.5) } });
    await pool.query('UPDATE api_keys SET needs_approval = true WHERE id = $1', [budgeted.id]);
    const one = (await k.place(budgeted.key, body(offer.id, { anchor_text: 'one' }))).json().data;
    const two = (await k.place(budgeted.key, body(offer.id, { anchor_text: 'two' }))).json().data;
    const before = await k.balances(ws.workspaceId);
    const approved = await approvalRequests.approve(deps, owner, one.id);
    expect(approved.ok && approved.value).toMatchObject({ status: 'approved', decided_by: { user_id: owner.userId, name: owner.name }, order_ids: [expect.any(Number)] });
    const second = await approvalRequests.approve(deps, owner, two.id);
    expect(second.ok && second.value.status).toBe('approved');
    const { rows } = await pool.query('SELECT placed_by_key_id, placed_by_user_id, approval_request_id, anchor_text, status FROM orders WHERE workspace_id = $1 ORDER BY id', [ws.workspaceId]);
    expect(rows).toEqual([
      { placed_by_key_id: budgeted.id, placed_by_user_id: null, approval_request_id: one.id, anchor_text: 'one', status: 'awaiting_acceptance' },
      { placed_by_key_id: budgeted.id, placed_by_user_id: null, approval_request_id: two.id, anchor_text: 'two', status: 'awaiting_acceptance' },
    ]);
    expect(await k.balances(ws.workspaceId)).toEqual({ available: before.available - 2 * offer.price, held: before.held + 2 * offer.price });
    // The budget counted both: the key's next order is over its day.
    await pool.query('UPDATE api_keys SET needs_approval = false WHERE id = $1', [budgeted.id]);
    const next = await k.place(budgeted.key, body(offer.id, { anchor_text: 'three' }));
    expect(next.statusCode).toBe(403);
    expect(next.json()).toMatchObject({ code: 'budget_exceeded', budget: { spent_cents: 2 * offer.price } });
    const types = await eventTypes(ws.workspaceId);
    expect(types.slice(0, 2)).toEqual(['approval_request.created', 'approval_request.created']);
    expect(types.slice(2)).toEqual(['order.placed', 'approval_request.approved', 'order.placed', 'key.budget_exhausted', 'approval_request.approved']);
    const order = (await get(ws.readKey, `/api/v1/orders/${approved.ok && approved.value.order_ids[0]}`)).json().data;
    expect(order).toMatchObject({ status: 'awaiting_acceptance', price: offer.price, outlet: { id: p.outletId } });
    await expectLedgerInvariants(h.database);
  });

  it('decline keeps the reason; a viewer or a member without the right to spend is refused 403; another workspace 404', async () => {
    const { ws, offer, owner } = await setup();
    const req = (await k.place(ws.spendKey, body(offer.id))).json().data;
    const viewer = await person(ws.workspaceId, 'viewer');
    const member = await person(ws.workspaceId, 'member');
    await expect(approvalRequests.approve(deps, viewer, req.id)).rejects.toMatchObject({ code: 'forbidden' });
    await expect(approvalRequests.decline(deps, member, req.id, null)).rejects.toMatchObject({ code: 'forbidden' });
    const stranger = await setup();
    await expect(approvalRequests.approve(deps, { ...stranger.owner, workspaceId: ws.workspaceId }, req.id)).rejects.toMatchObject({ code: 'not_found' });
    await expect(approvalRequests.approve(deps, stranger.owner, req.id)).rejects.toMatchObject({ code: 'not_found' });
    const declined = await approvalRequests.decline(deps, owner, req.id, '  too expensive  ');
    expect(declined.ok && declined.value).toMatchObject({ status: 'declined', decline_reason: 'too expensive', decided_by: { user_id: owner.userId } });
    await expect(approvalRequests.approve(deps, owner, req.id)).rejects.toMatchObject({ code: 'conflict', details: { status: 'declined' } });
    expect((await counts(ws.workspaceId)).orders).toBe(0);
  });

  it('a balance that dropped refuses the approval with 402 and the request stays pending', async () => {
    const { ws, offer, owner } = await setup({ balance: 15_000, price: 10_000 });
    const req = (await k.place(ws.spendKey, body(offer.id))).json().data;
    const other = await createKey(pool, { workspaceId: ws.workspaceId, canPlaceOrders: true });
    expect((await k.place(other.key, body(offer.id))).statusCode).toBe(201);
    await expect(approvalRequests.approve(deps, owner, req.id)).rejects.toMatchObject({ code: 'insufficient_balance' });
    expect((await get(ws.readKey, `/api/v1/approval-requests/${req.id}`)).json().data.status).toBe('pending');
  });

  it('an offer gone inactive ends the request failed with its code; a price changed, the key revoked too', async () => {
    const { ws, offer, owner } = await setup();
    const req = (await k.place(ws.spendKey, body(offer.id))).json().data;
    await pool.query('UPDATE offers SET active = false WHERE id = $1', [offer.id]);
    const failed = await approvalRequests.approve(deps, owner, req.id);
    expect(failed.ok && failed.value).toMatchObject({ status: 'failed', order_ids: [], failure: { code: 'invalid_input', message: expect.any(String) } });
    await pool.query('UPDATE offers SET active = true WHERE id = $1', [offer.id]);
    // A price changed since the request: the person approved the old total, so nothing is placed.
    const priced = (await k.place(ws.spendKey, body(offer.id, { anchor_text: 'priced' }))).json().data;
    await pool.query('UPDATE offers SET publisher_price_cents = publisher_price_cents + 100 WHERE id = $1', [offer.id]);
    const changed = await approvalRequests.approve(deps, owner, priced.id);
    expect(changed.ok && changed.value).toMatchObject({ status: 'failed', failure: { code: 'quote_changed' } });
    await pool.query('UPDATE offers SET publisher_price_cents = publisher_price_cents - 100 WHERE id = $1', [offer.id]);
    const again = (await k.place(ws.spendKey, body(offer.id))).json().data;
    expect(again.id).not.toBe(req.id);
    await pool.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [ws.spendKeyId]);
    const revoked = await approvalRequests.approve(deps, owner, again.id);
    expect(revoked.ok && revoked.value).toMatchObject({ status: 'failed', failure: { code: 'unauthenticated' } });
    expect((await counts(ws.workspaceId)).orders).toBe(0);
    expect((await eventTypes(ws.workspaceId)).filter((t) => t === 'approval_request.failed')).toHaveLength(3);
  });

  it('expiry: past APPROVAL_REQUEST_HOURS it reads expired, cannot be approved, and the sweep marks it with its event', async () => {
    const { ws, offer, owner } = await setup();
    const start = h.clock.now();
    const req = (await k.place(ws.spendKey, body(offer.id))).json().data;
    h.clock.set(start + 72 * 3_600_000 - 1000);
    expect((await get(ws.readKey, `/api/v1/approval-requests/${req.id}`)).json().data.status).toBe('pending');
    h.clock.set(start + 72 * 3_600_000 + 1000);
    try {
      expect((await get(ws.readKey, `/api/v1/approval-requests/${req.id}`)).json().data.status).toBe('expired');
      await expect(approvalRequests.approve(deps, owner, req.id)).rejects.toMatchObject({ code: 'conflict', details: { status: 'expired' } });
      expect(await expireApprovals(pool, h.clock.now(), deps.baseUrl)).toBeGreaterThanOrEqual(1);
      const { rows } = await pool.query('SELECT status FROM approval_requests WHERE id = $1', [req.id]);
      expect(rows[0].status).toBe('expired');
      expect(await eventTypes(ws.workspaceId)).toEqual(['approval_request.created', 'approval_request.expired']);
      // The same body again makes a new request.
      const fresh = await k.place(ws.spendKey, body(offer.id));
      expect(fresh.json().data.id).not.toBe(req.id);
    } finally {
      h.clock.set(start);
    }
  });
});

describe('races: exactly one outcome', () => {
  it('two owners approving at once place the orders once', async () => {
    const { ws, offer, owner } = await setup();
    const second = await person(ws.workspaceId, 'owner');
    const req = (await k.place(ws.spendKey, body(offer.id))).json().data;
    const results = await Promise.allSettled([approvalRequests.approve(deps, owner, req.id), approvalRequests.approve(deps, second, req.id)]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.code)).toEqual(['conflict']);
    expect((await counts(ws.workspaceId)).orders).toBe(1);
    await expectLedgerInvariants(h.database);
  });

  it('approve racing the agent’s cancel and the expiry sweep: one of them wins, 20 times over', async () => {
    for (let i = 0; i < 20; i++) {
      const { ws, offer, owner } = await setup();
      const req = (await k.place(ws.spendKey, body(offer.id))).json().data;
      const start = h.clock.now();
      // The sweep sees the request as due; approve and cancel are judged at the same time, so the first to lock it decides.
      const sweepAt = start + 73 * 3_600_000;
      const outcomes = await Promise.allSettled([
        approvalRequests.approve(deps, owner, req.id),
        h.app.inject({ method: 'POST', url: `/api/v1/approval-requests/${req.id}/cancel`, headers: bearer(ws.readKey) }),
        expireApprovals(pool, sweepAt, deps.baseUrl),
      ]);
      expect(outcomes.every((o) => o.status === 'fulfilled' || (o.reason as { code?: string }).code === 'conflict')).toBe(true);
      const { rows } = await pool.query('SELECT status, order_ids FROM approval_requests WHERE id = $1', [req.id]);
      const status = rows[0].status as string;
      expect(['approved', 'cancelled', 'expired']).toContain(status);
      const decided = (await eventTypes(ws.workspaceId)).filter((t) => t !== 'approval_request.created' && t !== 'order.placed');
      expect(decided).toEqual([`approval_request.${status}`]);
      expect((await counts(ws.workspaceId)).orders).toBe(status === 'approved' ? 1 : 0);
    }
    await expectLedgerInvariants(h.database);
  });
});

describe('approving a live placement with a key that needs approval', () => {
  it('answers 202 (approve_placement); the person approves and the publisher is paid', async () => {
    const { ws, offer, owner, p } = await setup();
    await pool.query('UPDATE api_keys SET needs_approval = false WHERE id = $1', [ws.spendKeyId]);
    const orderId = await k.accepted(ws.spendKey, p.publisherKey, offer.id, TARGET);
    await pool.query('UPDATE api_keys SET needs_approval = true WHERE id = $1', [ws.spendKeyId]);
    const live = await k.pub(p.publisherKey, `${orderId}/publish`, { live_url: `https://${p.domain}/post` });
    expect(live.statusCode, live.body).toBe(200);
    const res = await k.buyer(ws.spendKey, `${orderId}/approve`);
    expect(res.statusCode, res.body).toBe(202);
    const req = res.json().data;
    expect(req).toMatchObject({ action: 'approve_placement', total_cents: offer.price, items: [{ order_id: orderId, live_url: `https://${p.domain}/post` }] });
    expect((await get(ws.readKey, `/api/v1/orders/${orderId}`)).json().data.status).toBe('live_review');
    const approved = await approvalRequests.approve(deps, owner, req.id);
    expect(approved.ok && approved.value).toMatchObject({ status: 'approved', order_ids: [orderId] });
    expect((await get(ws.readKey, `/api/v1/orders/${orderId}`)).json().data.status).toBe('completed');
    await expectLedgerInvariants(h.database);
  });
});
