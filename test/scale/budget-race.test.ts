import { afterAll, describe, expect, it } from 'vitest';
import { dayStart } from '../../src/domain/keys/budget.js';
import { createKey } from '../../src/domain/keys/key-service.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { cleanupChildren, describeChild, type ServerChild, sleep, spawnServer } from '../helpers/child.js';
import { createTestDatabase } from '../helpers/db.js';
import { workspaceWithKeys } from '../helpers/fixtures.js';
import { expectLedgerInvariants } from '../helpers/ledger-invariants.js';

// A key's daily budget (docs/budgets.md) raced over two real server processes on one PostgreSQL:
// 50 concurrent placements by one key, split between them, with a daily limit that allows
// exactly K. The budget's sums are read under the workspace's balance lock, in the placement's own
// transaction, so the processes cannot pass it together. No Redis needed: each process limits
// rates in its own memory, and the limit is set far above the burst.

const database = await createTestDatabase();
afterAll(() => database.drop());
// Registered last, so it runs first: a server left by a failed assertion is stopped before the drop.
afterAll(cleanupChildren, 30_000);

interface Answer {
  server: string;
  status: number;
  body: { code?: string; budget?: Record<string, unknown> } & Record<string, unknown>;
}

async function place(server: ServerChild, name: string, key: string, offerId: number, idem: string): Promise<Answer> {
  const res = await fetch(`${server.baseUrl}/api/v1/orders`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'idempotency-key': idem, 'content-type': 'application/json' },
    body: JSON.stringify({ offer_ids: [offerId], target_url: 'https://buyer.example/' }),
    signal: AbortSignal.timeout(60_000),
  });
  return { server: name, status: res.status, body: (await res.json()) as Answer['body'] };
}

describe('a daily budget over two server processes', () => {
  it('50 concurrent placements by one key, a limit for exactly K: K orders, the ledger balanced, spent = K orders', { timeout: 240_000 }, async () => {
    const K = 7;
    const p = await publisherWithOutlet(database, [{ content_by: 'buyer', publisher_price_cents: 1_000 }]);
    const offer = p.offers[0]!;
    // The balance is far above the budget, so only the budget can refuse (never 402).
    const balance = offer.price * 100;
    const ws = await workspaceWithKeys(database.pool, { balanceCents: balance });
    // Exactly K orders: the K-th brings the day's remaining to zero (one key.budget_exhausted).
    const spending = await createKey(database.pool, { workspaceId: ws.workspaceId, canPlaceOrders: true, name: 'Raced agent', limits: { dailyLimitCents: K * offer.price } });

    const env = { DATABASE_URL: database.url, RATE_LIMIT_PER_MINUTE: '1000000', ORDER_SWEEP_INTERVAL_MS: '0', LINK_CHECK_POLL_MS: '0' };
    // Started together on purpose: migrations run under an advisory lock.
    const [a, b] = await Promise.all([spawnServer(env), spawnServer(env)]);
    await Promise.all([a.waitHealthy(60_000), b.waitHealthy(60_000)]);

    // The servers' clock is the real one: a burst across UTC midnight would meet two daily
    // windows. Too close to it, wait for the next day to begin (a guard, not an assertion).
    const toMidnight = dayStart(Date.now()) + 86_400_000 - Date.now();
    if (toMidnight < 60_000) await sleep(toMidnight + 1_000);
    const day = dayStart(Date.now());

    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? place(a, 'a', spending.key, offer.id, `race-${i}`) : place(b, 'b', spending.key, offer.id, `race-${i}`))),
    );
    const detail = `${answers.map((x) => `${x.server}:${x.status}`).join(' ')}${describeChild(a)}${describeChild(b)}`;
    expect(answers.filter((x) => x.server === 'a')).toHaveLength(25);
    expect(answers.filter((x) => x.status === 201), detail).toHaveLength(K);
    const refused = answers.filter((x) => x.status !== 201);
    expect(refused.map((x) => x.status), detail).toEqual(Array(50 - K).fill(403));
    for (const r of refused) {
      expect(r.body).toMatchObject({ code: 'budget_exceeded', budget: { window: 'day', limit_cents: K * offer.price, remaining_cents: 0 } });
    }

    // Exactly K orders, all of this key, in one UTC day.
    const { rows: orders } = await database.pool.query<{ n: number; spent: number; first: Date; last: Date }>(
      'SELECT count(*)::int AS n, COALESCE(sum(price), 0)::int AS spent, min(created_at) AS first, max(created_at) AS last FROM orders WHERE workspace_id = $1',
      [ws.workspaceId],
    );
    expect(orders[0]).toMatchObject({ n: K, spent: K * offer.price });
    expect(dayStart(orders[0]!.first.getTime())).toBe(day);
    expect(dayStart(orders[0]!.last.getTime())).toBe(day);
    const { rows: byKey } = await database.pool.query('SELECT count(*)::int AS n FROM orders WHERE placed_by_key_id = $1', [spending.id]);
    expect(byKey[0].n).toBe(K);

    // The ledger: balanced (every entry sums to 0), held exactly the K orders.
    await expectLedgerInvariants(database);
    const { rows: accounts } = await database.pool.query(`SELECT kind, balance::int AS balance FROM ledger_accounts WHERE workspace_id = $1 ORDER BY kind`, [ws.workspaceId]);
    expect(Object.fromEntries(accounts.map((r) => [r.kind, r.balance]))).toEqual({ available: balance - K * offer.price, held: K * offer.price });

    // The key's spent, as each process shows it: K orders, nothing left.
    for (const server of [a, b]) {
      const me = await fetch(`${server.baseUrl}/api/v1/me`, { headers: { authorization: `Bearer ${spending.key}` } });
      const budget = ((await me.json()) as { data: { key: { budget: { day: Record<string, unknown> } } } }).data.key.budget;
      expect(budget.day).toMatchObject({ limit_cents: K * offer.price, spent_cents: K * offer.price, remaining_cents: 0 });
    }
    // The day ran out once, whichever process placed the K-th order.
    const { rows: events } = await database.pool.query(`SELECT count(*)::int AS n FROM events WHERE type = 'key.budget_exhausted' AND workspace_id = $1`, [ws.workspaceId]);
    expect(events[0].n).toBe(1);
  });
});
