import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/db.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { cleanupChildren, spawnServer } from '../helpers/child.js';
import { workspaceWithKeys } from '../helpers/fixtures.js';
import { expectLedgerInvariants } from '../helpers/ledger-invariants.js';
import { publisherBalances } from '../helpers/orders.js';

const database = await createTestDatabase();
afterAll(() => database.drop());
// Registered last, so it runs first: a server left by a failed assertion is stopped before the drop.
afterAll(cleanupChildren, 30_000);

interface Attempt {
  key: string;
  status: number | 'failed';
  body?: unknown;
}

async function post(baseUrl: string, apiKey: string, idem: string, offerIds: number[]): Promise<Attempt> {
  try {
    const res = await fetch(`${baseUrl}/api/v1/orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'idempotency-key': idem, 'content-type': 'application/json' },
      body: JSON.stringify({ offer_ids: offerIds, target_url: 'https://buyer.example/' }),
      signal: AbortSignal.timeout(20_000),
    });
    return { key: idem, status: res.status, body: await res.json() };
  } catch {
    return { key: idem, status: 'failed' };
  }
}

describe('SIGKILL in the middle of a burst of orders', () => {
  it('leaves no half-made order and no double charge; retries with the same keys replay', async () => {
    const p = await publisherWithOutlet(database, Array.from({ length: 20 }, (_, i) => ({ title: `Offer ${i}`, publisher_price_cents: 1_000 })));
    const offerIds = p.offers.map((o) => o.id);
    const price = p.offers.reduce((s, o) => s + o.price, 0);
    const ws = await workspaceWithKeys(database.pool, { balanceCents: price * 1_000 });
    const env = { DATABASE_URL: database.url, RATE_LIMIT_PER_MINUTE: '1000000', ORDER_SWEEP_INTERVAL_MS: '0' };
    let committedUnanswered = 0;
    let round = 0;
    const firstAnswers = new Map<string, Attempt>();

    // The case below depends on where the kill lands: more rounds only when it has not happened yet.
    // Each server after the first answers the retries of the round before, then takes the next burst.
    let server = await spawnServer(env);
    await server.waitHealthy(30_000);
    while (round < 12 && (round < 2 || committedUnanswered === 0)) {
      round++;
      const keys = Array.from({ length: 80 }, (_, i) => `burst-${round}-${i}`);
      const inflight = keys.map((k) => post(server.baseUrl, ws.spendKey, k, offerIds));
      // Kill once the first orders have been answered, while others are mid-transaction.
      await Promise.race(inflight);
      server.proc.kill('SIGKILL');
      const attempts = await Promise.all(inflight);
      await server.exited;

      server = await spawnServer(env);
      await server.waitHealthy(30_000);
      // Retried ten at a time, as a well-behaved client would after an outage.
      const retries: Attempt[] = [];
      for (let i = 0; i < keys.length; i += 10) {
        retries.push(...(await Promise.all(keys.slice(i, i + 10).map((k) => post(server.baseUrl, ws.spendKey, k, offerIds)))));
      }

      for (const [i, first] of attempts.entries()) {
        const retry = retries[i]!;
        expect(retry.status, `retry of ${first.key}`).toBe(201);
        firstAnswers.set(first.key, retry);
        if (first.status === 201) {
          // Answered before the kill: the retry is the same response.
          expect(retry.body).toEqual(first.body);
        }
      }
      // A request the client never heard back from but whose transaction committed: the retry
      // must replay it rather than place it twice.
      const { rows } = await database.pool.query(
        `SELECT key FROM idempotency_records WHERE key = ANY($1::text[]) AND created_at < now() - interval '0 seconds'`,
        [attempts.filter((a) => a.status === 'failed').map((a) => a.key)],
      );
      committedUnanswered += rows.length;
    }
    await server.stop('SIGTERM');

    // Every key ended as exactly one placement of all 20 offers: whole orders, charged once.
    const { rows: perKey } = await database.pool.query(
      `SELECT r.key, json_array_length(r.outcome::json -> 'value') AS n FROM idempotency_records r WHERE r.key LIKE 'burst-%'`,
    );
    expect(perKey.length).toBe(firstAnswers.size);
    expect(perKey.every((r) => r.n === 20)).toBe(true);
    const { rows: orders } = await database.pool.query('SELECT count(*)::int AS n FROM orders WHERE workspace_id = $1', [ws.workspaceId]);
    expect(orders[0].n).toBe(firstAnswers.size * 20);
    const { rows: bal } = await database.pool.query(`SELECT kind, balance FROM ledger_accounts WHERE workspace_id = $1 ORDER BY kind`, [ws.workspaceId]);
    expect(bal).toEqual([
      { kind: 'available', balance: price * 1_000 - firstAnswers.size * price },
      { kind: 'held', balance: firstAnswers.size * price },
    ]);
    await expectLedgerInvariants(database);
    // The interesting case happened at least once: committed, killed before the reply, replayed.
    expect(committedUnanswered).toBeGreaterThan(0);
  }, 180_000);
});

describe('SIGKILL in the middle of a burst of approvals', () => {
  it('pays each publisher once; retries with the same keys replay', async () => {
    const { withTransaction } = await import('../../src/db/handle.js');
    const { placeOrders } = await import('../../src/domain/orders/placement-transaction.js');
    const { buyerActions } = await import('../../src/domain/orders/buyer-actions.js');
    const { publisherActions } = await import('../../src/domain/orders/publisher-actions.js');
    const { durationsFrom } = await import('../../src/domain/orders/states.js');
    const { defaultConfig } = await import('../../src/config.js');
    const durations = durationsFrom(defaultConfig());
    const p = await publisherWithOutlet(database, [{ title: 'Approvable', publisher_price_cents: 2_000 }]);
    const ws = await workspaceWithKeys(database.pool, { balanceCents: 10_000_000 });
    const principal = {
      keyId: ws.spendKeyId,
      name: 'spend',
      prefix: 'mk_',
      canPlaceOrders: true,
      abilities: [],
      workspaceId: ws.workspaceId,
      publisherId: null,
    } as Parameters<typeof placeOrders>[1];
    // 40 orders walked to live_review through the same domain calls the routes make.
    const ids: number[] = [];
    for (let i = 0; i < 40; i++) {
      const [order] = await withTransaction(database.pool, (tx) =>
        placeOrders(tx, principal, { offer_ids: [p.offers[0]!.id], target_url: 'https://buyer.example/' }, Date.now(), durations),
      );
      const id = order!.id;
      const pub = publisherActions(durations);
      await withTransaction(database.pool, (tx) => pub.accept(tx, p.publisherId, id, Date.now()));
      await withTransaction(database.pool, (tx) => pub.submitDraft(tx, p.publisherId, id, { title: 'A draft to approve', body: 'text' }, Date.now()));
      await withTransaction(database.pool, (tx) => buyerActions(durations).approveDraft(tx, principal, id, Date.now()));
      await withTransaction(database.pool, (tx) => pub.publish(tx, p.publisherId, id, `https://${p.domain}/${id}`, Date.now()));
      ids.push(id);
    }
    const env = { DATABASE_URL: database.url, RATE_LIMIT_PER_MINUTE: '1000000', ORDER_SWEEP_INTERVAL_MS: '0' };
    const approve = async (baseUrl: string, id: number): Promise<number | 'failed'> => {
      try {
        const res = await fetch(`${baseUrl}/api/v1/orders/${id}/approve`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ws.spendKey}`, 'idempotency-key': `approve-${id}` },
          signal: AbortSignal.timeout(20_000),
        });
        return res.status;
      } catch {
        return 'failed';
      }
    };
    const server = await spawnServer(env);
    await server.waitHealthy(30_000);
    const inflight = ids.map((id) => approve(server.baseUrl, id));
    await Promise.race(inflight);
    server.proc.kill('SIGKILL');
    await Promise.all(inflight);
    await server.exited;

    const again = await spawnServer(env);
    await again.waitHealthy(30_000);
    for (const id of ids) expect(await approve(again.baseUrl, id), `retry of order ${id}`).toBe(200);
    await again.stop('SIGTERM');

    const { rows } = await database.pool.query(
      `SELECT order_id, count(*)::int AS n FROM ledger_transactions WHERE kind = 'order_released' AND order_id = ANY($1::bigint[]) GROUP BY order_id`,
      [ids],
    );
    expect(rows.length).toBe(ids.length);
    expect(rows.every((r) => r.n === 1)).toBe(true);
    // Paid once each, into pending until each link's guarantee ends.
    expect(await publisherBalances(database.pool, p.publisherId)).toEqual({ pending: ids.length * 2_000, payable: 0 });
    await expectLedgerInvariants(database);
  }, 180_000);
});
