import { describe, expect, it } from 'vitest';
import { sweepDeadlines } from '../../src/domain/orders/sweep.js';
import { durationsFrom } from '../../src/domain/orders/states.js';
import { topUp } from '../../src/domain/ledger/ledger-service.js';
import { setupApp } from '../helpers/app.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { createTestDatabase } from '../helpers/db.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';
import { expectLedgerInvariants } from '../helpers/ledger-invariants.js';
import { articleFor, publisherBalances, verifyLiveLink } from '../helpers/orders.js';

const database = await createTestDatabase({ max: 20 });
const h = await setupApp({ RATE_LIMIT_PER_MINUTE: 100_000 }, { database });
const durations = durationsFrom(h.config);
const DAY = 86_400_000;
const N = Number(process.env.RACE_N ?? 20);
let seq = 0;

const place = (key: string, offerIds: number[], idem = `r-${++seq}`, extra: object = {}) =>
  h.app.inject({ method: 'POST', url: '/api/v1/orders', headers: { ...bearer(key), 'idempotency-key': idem }, payload: { offer_ids: offerIds, target_url: 'https://buyer.example/', ...extra } });
const buyer = (key: string, path: string, payload?: object, idem?: string) =>
  h.app.inject({ method: 'POST', url: `/api/v1/orders/${path}`, headers: { ...bearer(key), ...(idem ? { 'idempotency-key': idem } : {}) }, ...(payload ? { payload } : {}) });
const pub = (key: string, path: string, payload?: object) =>
  h.app.inject({ method: 'POST', url: `/api/v1/publisher/orders/${path}`, headers: bearer(key), ...(payload ? { payload } : {}) });
const sweep = () => sweepDeadlines(database.pool, h.clock.now(), durations);
/** A passing link check now: the review deadline may auto-approve the order (see `verifyLiveLink`). */
const verified = (orderId: number) => verifyLiveLink(database.pool, orderId, h.clock.now());
async function ledgerOf(orderId: number) {
  const { rows } = await database.pool.query('SELECT kind FROM ledger_transactions WHERE order_id = $1 ORDER BY id', [orderId]);
  return rows.map((r) => r.kind);
}
async function statusOf(orderId: number) {
  const { rows } = await database.pool.query('SELECT status FROM orders WHERE id = $1', [orderId]);
  return rows[0].status as string;
}
async function balances(workspaceId: number) {
  const { rows } = await database.pool.query(`SELECT kind, balance FROM ledger_accounts WHERE workspace_id = $1`, [workspaceId]);
  return Object.fromEntries(rows.map((r) => [r.kind, r.balance])) as { available: number; held: number };
}
const codes = (xs: { statusCode: number }[]) => xs.map((x) => x.statusCode).join(',');
const draft = { title: 'A draft worth approving', body: 'Some words [link](https://buyer.example/)' };
const draft2 = { title: 'A revised draft, v2 ok', body: 'Other words [link](https://buyer.example/)' };
const content = { title: 'The buyer own article', body: articleFor('https://buyer.example/') };

type Ws = Awaited<ReturnType<typeof workspaceWithKeys>>;
type Pub = Awaited<ReturnType<typeof publisherWithOutlet>>;

async function orderAt(
  stage: 'awaiting_content' | 'awaiting_acceptance' | 'writing' | 'draft_review' | 'publishing' | 'live_review',
  parties?: { ws?: Ws; p?: Pub },
) {
  const ws = parties?.ws ?? (await workspaceWithKeys(database.pool, { balanceCents: 100_000 }));
  const p = parties?.p ?? (await publisherWithOutlet(database, [{ content_by: stage === 'awaiting_content' ? 'buyer' : 'publisher' }]));
  const res = await place(ws.spendKey, [p.offers[0]!.id]);
  expect(res.statusCode, res.body).toBe(201);
  const order = res.json().data[0];
  if (stage === 'awaiting_content' || stage === 'awaiting_acceptance') return { ws, p, order };
  expect((await pub(p.publisherKey, `${order.id}/accept`)).statusCode).toBe(200);
  if (stage === 'writing') return { ws, p, order };
  expect((await pub(p.publisherKey, `${order.id}/draft`, draft)).statusCode).toBe(200);
  if (stage === 'draft_review') return { ws, p, order };
  expect((await buyer(ws.readKey, `${order.id}/approve-draft`)).statusCode).toBe(200);
  if (stage === 'publishing') return { ws, p, order };
  expect((await pub(p.publisherKey, `${order.id}/publish`, { live_url: `https://${p.domain}/post` })).statusCode).toBe(200);
  return { ws, p, order };
}

/**
 * Each race runs rounds against the shared app, database and clock; its sweeps act on every due
 * order. A test that fails by timing out goes on in the background, so the next one waits for it
 * to stop (it stops at its next round, once its signal is aborted) rather than share the database
 * with it. The timeout is only a hang detector: a round's work grows with the machine's load.
 */
let running: Promise<unknown> = Promise.resolve();
function race(name: string, body: (signal: AbortSignal) => Promise<void>) {
  it(name, { timeout: 120_000 }, async ({ signal }) => {
    await running;
    const run = body(signal);
    running = run.catch(() => undefined);
    await run;
  });
}

describe('POST /api/v1/orders and every order action: more races — happy', () => {
  race('buyer cancel racing publisher accept: exactly one wins, refund iff cancelled', async (signal) => {
    const tally = { cancel: 0, accept: 0 };
    for (let i = 0; i < N; i++) {
      signal.throwIfAborted();
      const { ws, p, order } = await orderAt('awaiting_acceptance');
      const [c, a] = await Promise.all([buyer(ws.readKey, `${order.id}/cancel`), pub(p.publisherKey, `${order.id}/accept`)]);
      expect([c.statusCode, a.statusCode].sort(), codes([c, a])).toEqual([200, 409]);
      const st = await statusOf(order.id);
      if (c.statusCode === 200) {
        tally.cancel++;
        expect(st).toBe('cancelled');
        expect(await ledgerOf(order.id)).toEqual(['order_placed', 'order_refunded']);
        expect(await balances(ws.workspaceId)).toEqual({ available: 100_000, held: 0 });
      } else {
        tally.accept++;
        expect(st).toBe('writing');
        expect(await ledgerOf(order.id)).toEqual(['order_placed']);
      }
    }
    console.log('cancel vs accept', tally);
    await expectLedgerInvariants(database);
  });

  race('buyer cancel racing decline: refunded once', async (signal) => {
    for (let i = 0; i < N; i++) {
      signal.throwIfAborted();
      const { ws, p, order } = await orderAt('awaiting_acceptance');
      const [c, d] = await Promise.all([buyer(ws.readKey, `${order.id}/cancel`), pub(p.publisherKey, `${order.id}/decline`, { reason: 'busy' })]);
      expect([c.statusCode, d.statusCode].sort(), codes([c, d])).toEqual([200, 409]);
      expect(await ledgerOf(order.id)).toEqual(['order_placed', 'order_refunded']);
      expect(await balances(ws.workspaceId)).toEqual({ available: 100_000, held: 0 });
    }
    await expectLedgerInvariants(database);
  });

  race('buyer cancel racing the respond_by expiry sweep: refunded exactly once', async (signal) => {
    const tally = { cancelled: 0, expired: 0 };
    for (let i = 0; i < N; i++) {
      signal.throwIfAborted();
      const { ws, order } = await orderAt('awaiting_acceptance');
      h.clock.advance(72 * 3_600_000 + 1);
      const [c] = await Promise.all([buyer(ws.readKey, `${order.id}/cancel`), sweep()]);
      expect([200, 409]).toContain(c.statusCode);
      const st = await statusOf(order.id);
      expect(st).toBe(c.statusCode === 200 ? 'cancelled' : 'expired');
      tally[st as 'cancelled' | 'expired']++;
      expect(await ledgerOf(order.id)).toEqual(['order_placed', 'order_refunded']);
      expect(await balances(ws.workspaceId)).toEqual({ available: 100_000, held: 0 });
    }
    console.log('cancel vs respond_by', tally);
    await expectLedgerInvariants(database);
  });

  race('buyer cancel of an awaiting_content order racing its expiry', async (signal) => {
    for (let i = 0; i < N; i++) {
      signal.throwIfAborted();
      const { ws, order } = await orderAt('awaiting_content');
      h.clock.advance(14 * DAY + 1);
      const [c] = await Promise.all([buyer(ws.readKey, `${order.id}/cancel`), sweep()]);
      expect([200, 409]).toContain(c.statusCode);
      expect(await ledgerOf(order.id)).toEqual(['order_placed', 'order_refunded']);
    }
    await expectLedgerInvariants(database);
  });

  race('buyer submit-content racing the awaiting_content expiry: content accepted (no refund) or expired (refund), never both', async (signal) => {
    const tally = { submitted: 0, expired: 0 };
    for (let i = 0; i < N; i++) {
      signal.throwIfAborted();
      const { ws, order } = await orderAt('awaiting_content');
      h.clock.advance(14 * DAY + 1);
      const [s] = await Promise.all([buyer(ws.readKey, `${order.id}/content`, content), sweep()]);
      expect([200, 409], s.body).toContain(s.statusCode);
      const st = await statusOf(order.id);
      if (s.statusCode === 200) {
        tally.submitted++;
        expect(st).toBe('awaiting_acceptance');
        expect(await ledgerOf(order.id)).toEqual(['order_placed']);
      } else {
        tally.expired++;
        expect(st).toBe('expired');
        expect(await ledgerOf(order.id)).toEqual(['order_placed', 'order_refunded']);
      }
    }
    console.log('content vs expiry', tally);
    await expectLedgerInvariants(database);
  });

  race('buyer submit-content racing publisher accept: an accepted order with the buyer content goes to publishing', async (signal) => {
    const tally: Record<string, number> = {};
    for (let i = 0; i < N; i++) {
      signal.throwIfAborted();
      const { ws, p, order } = await orderAt('awaiting_content');
      const [s, a] = await Promise.all([buyer(ws.readKey, `${order.id}/content`, content), pub(p.publisherKey, `${order.id}/accept`)]);
      expect(s.statusCode, s.body).toBe(200);
      const st = await statusOf(order.id);
      const key = `${a.statusCode}:${st}`;
      tally[key] = (tally[key] ?? 0) + 1;
    }
    console.log('content vs accept', tally);
    // Accepted after the content arrived: the contract says publishing, never writing.
    expect(tally['200:writing'] ?? 0).toBe(0);
  });

  race('submit-content committed while accept waits on the order lock (deterministic): accept → publishing', async (signal) => {
    const { ws, p } = await orderAt('awaiting_content');
    const o2 = await orderAt('awaiting_content', { ws, p });
    const tx = await database.pool.connect();
    try {
      await tx.query('BEGIN');
      // What submitContent does, in an open transaction.
      await tx.query('SELECT id FROM orders WHERE id = $1 FOR UPDATE', [o2.order.id]);
      await tx.query(
        `INSERT INTO order_contents (order_id, version, title, body, submitted_by, submitted_at, checks) VALUES ($1, 1, 't', 'b', 'buyer', now(), '[]')`,
        [o2.order.id],
      );
      await tx.query(`UPDATE orders SET status = 'awaiting_acceptance' WHERE id = $1`, [o2.order.id]);
      const accepting = pub(p.publisherKey, `${o2.order.id}/accept`);
      await waitForLockWaiters(tx, 1);
      await tx.query('COMMIT');
      const a = await accepting;
      expect(a.statusCode, a.body).toBe(200);
      expect(a.json().data.status).toBe('publishing');
    } finally {
      tx.release();
    }
  });

  race('approve-draft racing a revised draft: one consistent outcome', async (signal) => {
    const tally: Record<string, number> = {};
    for (let i = 0; i < N; i++) {
      signal.throwIfAborted();
      const { ws, p, order } = await orderAt('draft_review');
      const [ap, d] = await Promise.all([buyer(ws.readKey, `${order.id}/approve-draft`), pub(p.publisherKey, `${order.id}/draft`, draft2)]);
      expect(ap.statusCode, ap.body).toBe(200);
      expect([200, 409]).toContain(d.statusCode);
      const { rows } = await database.pool.query('SELECT max(version)::int AS v FROM order_contents WHERE order_id = $1', [order.id]);
      expect(await statusOf(order.id)).toBe('publishing');
      expect(rows[0].v).toBe(d.statusCode === 200 ? 2 : 1);
      const key = `draft ${d.statusCode}, approved v${ap.json().data.content.version}`;
      tally[key] = (tally[key] ?? 0) + 1;
    }
    console.log('approve-draft vs revised draft', tally);
    await expectLedgerInvariants(database);
  });

  race('approve and cancel of different orders in one workspace, many at once: no deadlock, balances exact', async (signal) => {
    const p = await publisherWithOutlet(database);
    const price = p.offers[0]!.price;
    for (let i = 0; i < N; i++) {
      signal.throwIfAborted();
      const ws = await workspaceWithKeys(database.pool, { balanceCents: 10 * price });
      const live = await Promise.all([0, 1, 2].map(() => orderAt('live_review', { ws, p })));
      const waiting = await Promise.all([0, 1, 2].map(() => orderAt('awaiting_acceptance', { ws, p })));
      const results = await Promise.all([
        ...live.map((o) => buyer(ws.spendKey, `${o.order.id}/approve`)),
        ...waiting.map((o) => buyer(ws.readKey, `${o.order.id}/cancel`)),
      ]);
      expect(codes(results)).toBe('200,200,200,200,200,200');
      expect(await balances(ws.workspaceId)).toEqual({ available: 7 * price, held: 0 });
    }
    await expectLedgerInvariants(database);
  });

  race('two sweeps in parallel racing a buyer approval and a draft approval: each order moves once', async (signal) => {
    for (let i = 0; i < N; i++) {
      signal.throwIfAborted();
      const live = await orderAt('live_review');
      await verified(live.order.id);
      const dr = await orderAt('draft_review');
      h.clock.advance(7 * DAY + 1);
      const [ap, ad] = await Promise.all([
        buyer(live.ws.spendKey, `${live.order.id}/approve`),
        buyer(dr.ws.readKey, `${dr.order.id}/approve-draft`),
        sweep(),
        sweep(),
      ]);
      expect([200, 409]).toContain(ap.statusCode);
      expect([200, 409]).toContain(ad.statusCode);
      expect(await ledgerOf(live.order.id)).toEqual(['order_placed', 'order_released']);
      expect(await statusOf(live.order.id)).toBe('completed');
      expect(await statusOf(dr.order.id)).toBe('publishing');
      expect(await ledgerOf(dr.order.id)).toEqual(['order_placed']);
    }
    await expectLedgerInvariants(database);
  });

  race('placements racing a cancel and an approval in one workspace', async (signal) => {
    const p = await publisherWithOutlet(database);
    const price = p.offers[0]!.price;
    for (let i = 0; i < Math.ceil(N / 3); i++) {
      signal.throwIfAborted();
      // 1 live + 1 waiting already placed; room for 5 more, plus 1 after the cancel.
      const ws = await workspaceWithKeys(database.pool, { balanceCents: 7 * price });
      const live = await orderAt('live_review', { ws, p });
      const waiting = await orderAt('awaiting_acceptance', { ws, p });
      const burst = [
        ...Array.from({ length: 10 }, () => place(ws.spendKey, [p.offers[0]!.id])),
        buyer(ws.readKey, `${waiting.order.id}/cancel`),
        buyer(ws.spendKey, `${live.order.id}/approve`),
        ...Array.from({ length: 10 }, () => place(ws.spendKey, [p.offers[0]!.id])),
      ];
      const results = await Promise.all(burst);
      const placed = results.filter((r, j) => j !== 10 && j !== 11 && r.statusCode === 201).length;
      expect(results[10]!.statusCode).toBe(200);
      expect(results[11]!.statusCode).toBe(200);
      for (const [j, r] of results.entries()) if (j !== 10 && j !== 11) expect([201, 402], r.body).toContain(r.statusCode);
      expect(placed === 5 || placed === 6).toBe(true);
      const b = await balances(ws.workspaceId);
      expect(b).toEqual({ available: 7 * price - (placed + 2) * price + price, held: placed * price });
    }
    await expectLedgerInvariants(database);
  });

  race('concurrent top-ups racing placements (with and without content)', async (signal) => {
    const p = await publisherWithOutlet(database, [{}, { title: 'Buyer content', content_by: 'buyer' }]);
    const [a, b] = p.offers as [(typeof p.offers)[0], (typeof p.offers)[0]];
    for (let i = 0; i < Math.ceil(N / 3); i++) {
      signal.throwIfAborted();
      const ws = await workspaceWithKeys(database.pool, { balanceCents: a.price });
      const ops: Promise<{ kind: string; ok: boolean; amount: number }>[] = [];
      for (let j = 0; j < 10; j++) {
        ops.push(topUp(database.pool, ws.workspaceId, a.price).then(() => ({ kind: 'top', ok: true, amount: a.price })));
        ops.push(place(ws.spendKey, [a.id]).then((r) => ({ kind: 'place', ok: r.statusCode === 201, amount: a.price, code: r.statusCode })));
        ops.push(
          place(ws.spendKey, [b.id], undefined, { content: content.body, content_title: content.title }).then((r) => ({
            kind: 'placeC',
            ok: r.statusCode === 201,
            amount: b.price,
          })),
        );
      }
      const done = await Promise.all(ops);
      const spent = done.filter((d) => d.kind !== 'top' && d.ok).reduce((s, d) => s + d.amount, 0);
      const total = a.price * 11;
      expect(await balances(ws.workspaceId)).toEqual({ available: total - spent, held: spent });
    }
    await expectLedgerInvariants(database);
  });

  race('one Idempotency-Key on approve and cancel of one order: one runs, the other is refused', async (signal) => {
    for (let i = 0; i < N; i++) {
      signal.throwIfAborted();
      const stage = i % 2 ? 'live_review' : 'awaiting_acceptance';
      const { ws, order } = await orderAt(stage);
      const key = `same-${i}`;
      const [ap, c] = await Promise.all([buyer(ws.spendKey, `${order.id}/approve`, undefined, key), buyer(ws.spendKey, `${order.id}/cancel`, undefined, key)]);
      const pair = [ap.statusCode, c.statusCode];
      // Exactly one ran; the other: 409 in progress or 422 reused.
      const ran = [ap, c].filter((r) => !(r.statusCode === 409 && r.json().code === 'idempotency_in_progress') && !(r.statusCode === 422));
      expect(ran.length, `${pair} ${ap.body} ${c.body}`).toBe(1);
      const kinds = await ledgerOf(order.id);
      const st = await statusOf(order.id);
      if (stage === 'live_review') {
        expect(kinds).toEqual(ran[0] === ap ? ['order_placed', 'order_released'] : ['order_placed']);
        expect(st).toBe(ran[0] === ap ? 'completed' : 'live_review');
      } else {
        expect(kinds).toEqual(ran[0] === c ? ['order_placed', 'order_refunded'] : ['order_placed']);
        expect(st).toBe(ran[0] === c ? 'cancelled' : 'awaiting_acceptance');
      }
    }
    await expectLedgerInvariants(database);
  });
  race('50 concurrent cancels of one order: one 200, 49 × 409, refunded once', async (signal) => {
    for (let i = 0; i < 3; i++) {
      signal.throwIfAborted();
      const { ws, order } = await orderAt('awaiting_acceptance');
      const results = await Promise.all(Array.from({ length: 50 }, () => buyer(ws.readKey, `${order.id}/cancel`)));
      expect(results.filter((r) => r.statusCode === 200)).toHaveLength(1);
      expect(results.filter((r) => r.statusCode === 409)).toHaveLength(49);
      expect(await ledgerOf(order.id)).toEqual(['order_placed', 'order_refunded']);
    }
    await expectLedgerInvariants(database);
  });

  race('placements with and without content on a balance for exactly 15', async (signal) => {
    const p = await publisherWithOutlet(database, [{ publisher_price_cents: 10_000 }, { title: 'Buyer content', content_by: 'buyer', publisher_price_cents: 10_000 }]);
    const [a, b] = p.offers as [(typeof p.offers)[0], (typeof p.offers)[0]];
    expect(a.price).toBe(b.price);
    for (let i = 0; i < 3; i++) {
      signal.throwIfAborted();
      const ws = await workspaceWithKeys(database.pool, { balanceCents: a.price * 15 });
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, j) =>
          j % 2 ? place(ws.spendKey, [a.id]) : place(ws.spendKey, [b.id], undefined, { content: content.body, content_title: content.title }),
        ),
      );
      expect(results.filter((r) => r.statusCode === 201), codes(results)).toHaveLength(15);
      expect(results.filter((r) => r.statusCode === 402)).toHaveLength(25);
      expect(await balances(ws.workspaceId)).toEqual({ available: 0, held: a.price * 15 });
    }
    await expectLedgerInvariants(database);
  });

  race('one publisher, many workspaces: approvals, two sweeps and top-ups at once (hot pending and fees rows, no deadlock)', async (signal) => {
    const p = await publisherWithOutlet(database);
    for (let round = 0; round < 3; round++) {
      signal.throwIfAborted();
      const wss = await Promise.all(Array.from({ length: 6 }, () => workspaceWithKeys(database.pool, { balanceCents: 100_000 })));
      const due: { ws: Ws; id: number }[] = [];
      for (const ws of wss) for (let k = 0; k < 2; k++) due.push({ ws, id: (await orderAt('live_review', { ws, p })).order.id });
      for (const d of due) await verified(d.id);
      h.clock.advance(7 * DAY + 1);
      const before = await publisherBalances(database.pool, p.publisherId);
      const results = await Promise.all([
        ...due.map((d, k) => (k % 2 ? buyer(d.ws.spendKey, `${d.id}/approve`) : Promise.resolve({ statusCode: 0 }))),
        ...wss.map((ws) => topUp(database.pool, ws.workspaceId, 1234).then(() => ({ statusCode: 1 }))),
        sweep().then(() => ({ statusCode: 2 })),
        sweep().then(() => ({ statusCode: 2 })),
      ]);
      for (const r of results) expect([0, 1, 2, 200, 409]).toContain(r.statusCode);
      for (const d of due) expect(await ledgerOf(d.id)).toEqual(['order_placed', 'order_released']);
      const after = await publisherBalances(database.pool, p.publisherId);
      expect(after.pending - before.pending).toBe(12 * p.offers[0]!.publisher_price_cents);
      expect(after.payable).toBe(before.payable);
    }
    await expectLedgerInvariants(database);
  });
});

async function waitForLockWaiters(c: { query: (s: string) => Promise<{ rows: { n: number }[] }> }, n: number) {
  for (let i = 0; i < 3000; i++) {
    const { rows } = await c.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
    );
    if (rows[0]!.n >= n) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('no lock waiter');
}
