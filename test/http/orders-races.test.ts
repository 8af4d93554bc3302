import { describe, expect, it } from 'vitest';
import { upsertOutlets } from '../../src/domain/outlets/outlet-upsert.js';
import { sweepDeadlines } from '../../src/domain/orders/sweep.js';
import { durationsFrom } from '../../src/domain/orders/states.js';
import { setupApp } from '../helpers/app.js';
import { offerInput, publisherWithOutlet } from '../helpers/catalog.js';
import { createTestDatabase } from '../helpers/db.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';
import { expectLedgerInvariants } from '../helpers/ledger-invariants.js';
import { FAILING_LIVE_CHECKS, publisherBalances, recordLiveCheck, verifyLiveLink } from '../helpers/orders.js';

const database = await createTestDatabase({ max: 20 });
const h = await setupApp({ RATE_LIMIT_PER_MINUTE: 100_000 }, { database });
const durations = durationsFrom(h.config);
const DAY = 86_400_000;
let seq = 0;

const place = (key: string, offerIds: number[], idem = `r-${++seq}`) =>
  h.app.inject({ method: 'POST', url: '/api/v1/orders', headers: { ...bearer(key), 'idempotency-key': idem }, payload: { offer_ids: offerIds, target_url: 'https://buyer.example/' } });
const buyer = (key: string, path: string) => h.app.inject({ method: 'POST', url: `/api/v1/orders/${path}`, headers: bearer(key) });
const pub = (key: string, path: string, payload?: object) =>
  h.app.inject({ method: 'POST', url: `/api/v1/publisher/orders/${path}`, headers: bearer(key), ...(payload ? { payload } : {}) });
const count = (xs: { statusCode: number }[], status: number) => xs.filter((x) => x.statusCode === status).length;
const sweep = () => sweepDeadlines(database.pool, h.clock.now(), durations);
/** A passing link check now: the review deadline may auto-approve the order (see `verifyLiveLink`). */
const verified = (orderId: number) => verifyLiveLink(database.pool, orderId, h.clock.now());
async function ledgerOf(orderId: number) {
  const { rows } = await database.pool.query('SELECT kind FROM ledger_transactions WHERE order_id = $1 ORDER BY id', [orderId]);
  return rows.map((r) => r.kind);
}
async function balances(workspaceId: number) {
  const { rows } = await database.pool.query(`SELECT kind, balance FROM ledger_accounts WHERE workspace_id = $1`, [workspaceId]);
  return Object.fromEntries(rows.map((r) => [r.kind, r.balance])) as { available: number; held: number };
}
const draft = { title: 'A draft worth approving', body: 'Some words [link](https://buyer.example/)' };

/** An order moved to `live_review` (or to `stage`) through the real routes. */
async function orderAt(
  stage: 'awaiting_acceptance' | 'writing' | 'publishing' | 'live_review',
  parties?: { ws: Awaited<ReturnType<typeof workspaceWithKeys>>; p: Awaited<ReturnType<typeof publisherWithOutlet>> },
) {
  const ws = parties?.ws ?? (await workspaceWithKeys(database.pool, { balanceCents: 100_000 }));
  const p = parties?.p ?? (await publisherWithOutlet(database));
  const order = (await place(ws.spendKey, [p.offers[0]!.id])).json().data[0];
  if (stage !== 'awaiting_acceptance') await pub(p.publisherKey, `${order.id}/accept`);
  if (stage === 'publishing' || stage === 'live_review') {
    await pub(p.publisherKey, `${order.id}/draft`, draft);
    await buyer(ws.readKey, `${order.id}/approve-draft`);
  }
  if (stage === 'live_review') await pub(p.publisherKey, `${order.id}/publish`, { live_url: `https://${p.domain}/post` });
  return { ws, p, order };
}

describe('POST /api/v1/orders, the order actions and the sweep: races — happy', () => {
  it('100 concurrent orders on a balance that covers exactly 37: 37 orders, 63 × 402, balance 0', async () => {
    const p = await publisherWithOutlet(database);
    const price = p.offers[0]!.price;
    const ws = await workspaceWithKeys(database.pool, { balanceCents: price * 37 });
    const results = await Promise.all(Array.from({ length: 100 }, () => place(ws.spendKey, [p.offers[0]!.id])));
    expect(count(results, 201)).toBe(37);
    expect(count(results, 402)).toBe(63);
    expect(await balances(ws.workspaceId)).toEqual({ available: 0, held: price * 37 });
    const { rows } = await database.pool.query('SELECT count(*)::int AS n FROM orders WHERE workspace_id = $1', [ws.workspaceId]);
    expect(rows[0].n).toBe(37);
    await expectLedgerInvariants(database);
  });

  it('50 concurrent approvals of one order: one 200, 49 × 409, the publisher paid once', async () => {
    const { ws, p, order } = await orderAt('live_review');
    const results = await Promise.all(Array.from({ length: 50 }, () => buyer(ws.spendKey, `${order.id}/approve`)));
    expect(count(results, 200)).toBe(1);
    expect(count(results, 409)).toBe(49);
    expect(await ledgerOf(order.id)).toEqual(['order_placed', 'order_released']);
    // Paid once, into pending until the link guarantee ends.
    expect(await publisherBalances(database.pool, p.publisherId)).toEqual({ pending: p.offers[0]!.publisher_price_cents, payable: 0 });
    await expectLedgerInvariants(database);
  });

  it('50 concurrent requests with one Idempotency-Key: one order; the rest replay it or get 409', async () => {
    const p = await publisherWithOutlet(database);
    const ws = await workspaceWithKeys(database.pool, { balanceCents: 1_000_000 });
    const results = await Promise.all(Array.from({ length: 50 }, () => place(ws.spendKey, [p.offers[0]!.id], 'one-key')));
    const created = results.filter((r) => r.statusCode === 201);
    expect(created.length + count(results, 409)).toBe(50);
    expect(created.filter((r) => r.headers['idempotent-replayed'] !== 'true')).toHaveLength(1);
    for (const r of results.filter((x) => x.statusCode === 409)) expect(r.json().code).toBe('idempotency_in_progress');
    const ids = new Set(created.map((r) => r.json().data[0].id));
    expect(ids.size).toBe(1);
    const { rows } = await database.pool.query('SELECT count(*)::int AS n FROM orders WHERE workspace_id = $1', [ws.workspaceId]);
    expect(rows[0].n).toBe(1);
    await expectLedgerInvariants(database);
  });

  it('50 concurrent requests with one Idempotency-Key on too little balance: one refusal stored, the rest replay it or get 409', async () => {
    const p = await publisherWithOutlet(database);
    const ws = await workspaceWithKeys(database.pool, { balanceCents: 1 });
    const results = await Promise.all(Array.from({ length: 50 }, () => place(ws.spendKey, [p.offers[0]!.id], 'poor-key')));
    expect(count(results, 402) + count(results, 409)).toBe(50);
    // One refusal ran; every other 402 is its replay, the same bytes.
    const refusals = results.filter((r) => r.statusCode === 402);
    expect(refusals.filter((r) => r.headers['idempotent-replayed'] !== 'true')).toHaveLength(1);
    expect(new Set(refusals.map((r) => r.body)).size).toBe(1);
    for (const r of results.filter((x) => x.statusCode === 409)) expect(r.json().code).toBe('idempotency_in_progress');
    const { rows } = await database.pool.query(`SELECT outcome::json -> 'error' ->> 'code' AS code FROM idempotency_records WHERE key = 'poor-key'`);
    expect(rows).toEqual([{ code: 'insufficient_balance' }]);
    const replay = await place(ws.spendKey, [p.offers[0]!.id], 'poor-key');
    expect(replay.statusCode).toBe(402);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    const orders = await database.pool.query('SELECT count(*)::int AS n FROM orders WHERE workspace_id = $1', [ws.workspaceId]);
    expect(orders.rows[0].n).toBe(0);
    await expectLedgerInvariants(database);
  });

  it('one Idempotency-Key has one outcome even when a cancel frees the balance mid-burst (a 402 answered while a retry placed the order)', async () => {
    const p = await publisherWithOutlet(database, [{ publisher_price_cents: 10_000 }, { title: 'Second', publisher_price_cents: 10_000 }]);
    const [a, b] = p.offers as [(typeof p.offers)[0], (typeof p.offers)[0]];
    for (let round = 0; round < 5; round++) {
      // Enough for one order left over plus what a cancel gives back: a + b only after the cancel.
      const ws = await workspaceWithKeys(database.pool, { balanceCents: a.price + b.price + a.price - 1 });
      const held = (await place(ws.spendKey, [a.id])).json().data[0];
      const key = `freed-${round}`;
      const burst = Array.from({ length: 30 }, (_, i) =>
        i === 5 ? buyer(ws.spendKey, `${held.id}/cancel`) : place(ws.spendKey, [a.id, b.id], key),
      );
      const results = (await Promise.all(burst)).filter((_, i) => i !== 5);
      const firsts = results.filter((r) => r.statusCode !== 409 && r.headers['idempotent-replayed'] !== 'true');
      expect(firsts, results.map((r) => r.statusCode).join(',')).toHaveLength(1);
      const answered = results.filter((r) => r.statusCode !== 409);
      expect(new Set(answered.map((r) => `${r.statusCode} ${r.body}`)).size).toBe(1);
      for (const r of results.filter((x) => x.statusCode === 409)) expect(r.json().code).toBe('idempotency_in_progress');
      const placed = await database.pool.query('SELECT count(*)::int AS n FROM orders WHERE workspace_id = $1', [ws.workspaceId]);
      expect(placed.rows[0].n).toBe(firsts[0]!.statusCode === 201 ? 3 : 1);
    }
    await expectLedgerInvariants(database);
  });

  it('approve racing the auto-approve sweep pays exactly once', async () => {
    for (let i = 0; i < 5; i++) {
      const { ws, order } = await orderAt('live_review');
      await verified(order.id);
      h.clock.advance(7 * DAY + 1);
      const [approve] = await Promise.all([buyer(ws.spendKey, `${order.id}/approve`), sweep()]);
      expect([200, 409]).toContain(approve.statusCode);
      expect(await ledgerOf(order.id)).toEqual(['order_placed', 'order_released']);
    }
    await expectLedgerInvariants(database);
  });

  it('approve racing the sweep returning a placement whose check failed: paid or returned to publishing, never both', async () => {
    for (let i = 0; i < 5; i++) {
      const { ws, order } = await orderAt('live_review');
      await recordLiveCheck(database.pool, order.id, FAILING_LIVE_CHECKS, h.clock.now());
      h.clock.advance(7 * DAY + 1);
      const [approve, swept] = await Promise.all([buyer(ws.spendKey, `${order.id}/approve`), sweep()]);
      const { rows } = await database.pool.query('SELECT status FROM orders WHERE id = $1', [order.id]);
      if (approve.statusCode === 200) {
        expect(rows[0].status).toBe('completed');
        expect(await ledgerOf(order.id)).toEqual(['order_placed', 'order_released']);
      } else {
        expect(approve.statusCode).toBe(409);
        expect(swept.returned).toBeGreaterThanOrEqual(1);
        expect(rows[0].status).toBe('publishing');
        expect(await ledgerOf(order.id)).toEqual(['order_placed']);
      }
    }
    await expectLedgerInvariants(database);
  });

  it('the sweep never holds one order\'s payout rows while it waits for another order\'s workspace (no deadlock with an approval)', async () => {
    // a1 (workspace 1) falls due first, then a2 and b (workspace 2). A buyer's approval of b holds
    // b and workspace 2's balance rows, then wants the publisher's and the fee rows, which the
    // sweep takes when it pays a1 out. Swept in one transaction, the sweep kept those rows while
    // waiting for workspace 2 to pay a2 out: each waited for the other.
    const a1 = await orderAt('live_review');
    h.clock.advance(1_000);
    const a2 = await orderAt('live_review');
    const b = await orderAt('live_review', { ws: a2.ws, p: a2.p });
    for (const o of [a1, a2, b]) await verified(o.order.id);
    h.clock.advance(7 * DAY + 10_000);
    const approval = await database.pool.connect();
    try {
      await approval.query('BEGIN');
      await approval.query('SELECT id FROM orders WHERE id = $1 FOR UPDATE', [b.order.id]);
      await approval.query(`SELECT id FROM ledger_accounts WHERE workspace_id = $1 ORDER BY kind FOR UPDATE`, [a2.ws.workspaceId]);
      const sweeping = sweep();
      // Until the sweep waits for workspace 2 (having paid a1 out).
      for (let i = 0; i < 200; i++) {
        const { rows } = await approval.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
        );
        if (rows[0].n > 0) break;
        await new Promise((r) => setTimeout(r, 25));
      }
      await approval.query(`UPDATE ledger_accounts SET balance = balance WHERE publisher_id = $1`, [b.p.publisherId]);
      await approval.query(`UPDATE ledger_accounts SET balance = balance WHERE kind = 'fees'`);
      await approval.query('ROLLBACK');
      await sweeping;
    } finally {
      approval.release();
    }
    for (const o of [a1, a2, b]) expect(await ledgerOf(o.order.id)).toEqual(['order_placed', 'order_released']);
    await expectLedgerInvariants(database);
  });

  it('decline or accept racing the respond_by expiry refunds at most once', async () => {
    for (let i = 0; i < 5; i++) {
      const a = await orderAt('awaiting_acceptance');
      const b = await orderAt('awaiting_acceptance');
      h.clock.advance(72 * 3_600_000 + 1);
      const [declined, accepted] = await Promise.all([
        pub(a.p.publisherKey, `${a.order.id}/decline`, { reason: 'busy' }),
        pub(b.p.publisherKey, `${b.order.id}/accept`),
        sweep(),
      ]);
      expect([200, 409]).toContain(declined.statusCode);
      expect([200, 409]).toContain(accepted.statusCode);
      expect(await ledgerOf(a.order.id)).toEqual(['order_placed', 'order_refunded']);
      const bLedger = await ledgerOf(b.order.id);
      expect(bLedger).toEqual(accepted.statusCode === 200 ? ['order_placed'] : ['order_placed', 'order_refunded']);
    }
    await expectLedgerInvariants(database);
  });

  it('publish racing the deliver_by expiry either publishes or refunds, never both', async () => {
    for (let i = 0; i < 5; i++) {
      const { p, order } = await orderAt('publishing');
      h.clock.advance(3 * DAY + 1);
      const [published] = await Promise.all([pub(p.publisherKey, `${order.id}/publish`, { live_url: `https://${p.domain}/x` }), sweep()]);
      const kinds = await ledgerOf(order.id);
      if (published.statusCode === 200) expect(kinds).toEqual(['order_placed']);
      else expect(kinds).toEqual(['order_placed', 'order_refunded']);
    }
    await expectLedgerInvariants(database);
  });

  it('a fee rate and offer price changed after placement: the frozen amounts move', async () => {
    const { ws, p, order } = await orderAt('live_review');
    const before = p.offers[0]!;
    // Re-price the offer at another fee rate.
    await upsertOutlets(database.pool, p.publisherId, [
      { name: 'Outlet', domain: p.domain, description: 'x', type: 'blog', country: 'US', language: 'en', topics: [], traffic: { monthly_visits: 1, verified: false }, offers: [offerInput({ title: 'Offer 1', publisher_price_cents: 55_555 })] },
    ], 0.5);
    const res = await buyer(ws.spendKey, `${order.id}/approve`);
    expect(res.statusCode).toBe(200);
    const { rows } = await database.pool.query(
      `SELECT a.kind, e.amount FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id JOIN ledger_accounts a ON a.id = e.account_id
        WHERE t.order_id = $1 AND t.kind = 'order_released' ORDER BY a.kind`,
      [order.id],
    );
    expect(rows).toEqual([
      { kind: 'held', amount: -before.price },
      { kind: 'pending', amount: before.publisher_price_cents },
      { kind: 'fees', amount: before.fee_cents },
    ]);
    expect(await balances(ws.workspaceId)).toEqual({ available: 100_000 - before.price, held: 0 });
    await expectLedgerInvariants(database);
  });
});
