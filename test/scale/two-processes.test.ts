import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../src/domain/keys/key-service.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { cleanupChildren, describeChild, eventually, type ServerChild, sleep, spawnServer } from '../helpers/child.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { type WorkspaceFixture, workspaceWithKeys } from '../helpers/fixtures.js';
import { expectLedgerInvariants } from '../helpers/ledger-invariants.js';
import { publisherBalances } from '../helpers/orders.js';
import { testRedisUrl, uniquePrefix } from '../helpers/redis.js';

// Scale-out (docs/scale-out.md): two real server processes on two ports, one PostgreSQL
// database and one Redis. Everything that must hold for N processes behind a load balancer is
// checked with requests split between them: the shared per-key rate limit, the money invariants
// under races, the deadline sweep running in both, and MCP quotes confirmed on the other process.

const redisUrl = await testRedisUrl();

const LIMIT = 20;
// Only awaiting_acceptance gets a short deadline (≈ 1.8 s); every other state keeps its default,
// so orders the other tests leave in awaiting_content or later stay put. Offers with
// content_by 'buyer' start in awaiting_content (14 days); 'publisher' in awaiting_acceptance.
const RESPOND_HOURS = 0.0005;

interface Res {
  status: number;
  headers: Headers;
  body: any;
}

describe.skipIf(!redisUrl)('two processes, one PostgreSQL, one Redis', () => {
  let database: TestDatabase;
  let a: ServerChild;
  let b: ServerChild;
  /** Alternates A, B, A, … by index. */
  const pick = (i: number) => (i % 2 === 0 ? a : b);

  beforeAll(async () => {
    database = await createTestDatabase();
    const env = {
      DATABASE_URL: database.url,
      REDIS_URL: redisUrl!,
      REDIS_KEY_PREFIX: uniquePrefix(),
      RATE_LIMIT_PER_MINUTE: String(LIMIT),
      ORDER_SWEEP_INTERVAL_MS: '200',
      ORDER_RESPOND_HOURS: String(RESPOND_HOURS),
      // info: the sweep logs what it did, which (c) adds up across both processes.
      LOG_LEVEL: 'info',
    };
    // Started together on purpose: migrations run under an advisory lock.
    [a, b] = await Promise.all([spawnServer(env), spawnServer(env)]);
    await Promise.all([a.waitHealthy(45_000), b.waitHealthy(45_000)]);

    // Each process counts in its memory until its Redis client is ready: wait until a count made
    // on A is seen by B (a fresh key each attempt, so nothing here touches the tests' buckets).
    const ws = await workspaceWithKeys(database.pool);
    await eventually(
      async () => {
        const { key } = await createKey(database.pool, { workspaceId: ws.workspaceId });
        const first = await call(a, 'GET', '/api/v1/me', key);
        const second = await call(b, 'GET', '/api/v1/me', key);
        const third = await call(a, 'GET', '/api/v1/me', key);
        return first.headers.get('x-ratelimit-remaining') === String(LIMIT - 1) &&
          second.headers.get('x-ratelimit-remaining') === String(LIMIT - 2) &&
          third.headers.get('x-ratelimit-remaining') === String(LIMIT - 3);
      },
      'both processes counting in Redis',
      15_000,
      200,
    );
  }, 90_000);

  afterAll(async () => {
    await cleanupChildren();
    await database?.drop();
  });

  async function call(server: ServerChild, method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}): Promise<Res> {
    const res = await fetch(`${server.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(20_000),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
  }

  let idem = 0;
  const place = (server: ServerChild, key: string, offerIds: number[]) =>
    call(server, 'POST', '/api/v1/orders', key, { offer_ids: offerIds, target_url: 'https://buyer.example/' }, { 'idempotency-key': `scale-${++idem}-${Date.now()}` });

  /** More spending keys of one workspace: each key has its own bucket of LIMIT requests a minute. */
  const spendKeys = async (ws: WorkspaceFixture, n: number) =>
    Promise.all(Array.from({ length: n }, async () => (await createKey(database.pool, { workspaceId: ws.workspaceId, canPlaceOrders: true })).key));

  const count = (rs: Res[], status: number) => rs.filter((r) => r.status === status).length;

  async function balances(workspaceId: number) {
    const { rows } = await database.pool.query(`SELECT kind, balance FROM ledger_accounts WHERE workspace_id = $1`, [workspaceId]);
    return Object.fromEntries(rows.map((r) => [r.kind, Number(r.balance)])) as { available: number; held: number };
  }

  async function ledgerOf(orderId: number) {
    const { rows } = await database.pool.query('SELECT kind FROM ledger_transactions WHERE order_id = $1 ORDER BY id', [orderId]);
    return rows.map((r) => r.kind as string);
  }

  it('(a) one key gets LIMIT requests a minute in total, whichever process answers', async () => {
    const ws = await workspaceWithKeys(database.pool);
    // One after another, alternating: either process alone sees only 15 requests, under the limit.
    const sequential: Res[] = [];
    for (let i = 0; i < 30; i++) sequential.push(await call(pick(i), 'GET', '/api/v1/me', ws.readKey));
    expect(sequential.map((r) => r.status)).toEqual([...Array(LIMIT).fill(200), ...Array(30 - LIMIT).fill(429)]);
    expect(sequential.slice(0, LIMIT).map((r) => Number(r.headers.get('x-ratelimit-remaining')))).toEqual(
      Array.from({ length: LIMIT }, (_, i) => LIMIT - 1 - i),
    );
    for (const r of sequential.slice(LIMIT)) {
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(Number(r.headers.get('retry-after'))).toBeLessThanOrEqual(60);
      expect(r.body).toMatchObject({ code: 'rate_limited', retry_after: Number(r.headers.get('retry-after')) });
    }
    // Both processes refused some: the count B saw includes A's requests, and the other way round.
    expect(new Set(sequential.map((r, i) => (r.status === 429 ? i % 2 : -1)).filter((x) => x >= 0)).size).toBe(2);

    // All at once, still split between the processes: exactly LIMIT get through.
    const burst = await Promise.all(Array.from({ length: 30 }, (_, i) => call(pick(i), 'GET', '/api/v1/me', ws.spendKey)));
    expect(count(burst, 200)).toBe(LIMIT);
    expect(count(burst, 429)).toBe(30 - LIMIT);
    for (const r of burst.filter((x) => x.status === 429)) expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('(b) 2N concurrent orders on a balance for N, split across both: N × 201, N × 402, balance 0', async () => {
    const N = 15;
    const p = await publisherWithOutlet(database, [{ content_by: 'buyer' }]);
    const offer = p.offers[0]!;
    const ws = await workspaceWithKeys(database.pool, { balanceCents: offer.price * N });
    const keys = await spendKeys(ws, 6); // 5 requests per key, well under the limit
    const results = await Promise.all(Array.from({ length: 2 * N }, (_, i) => place(pick(i), keys[i % keys.length]!, [offer.id])));
    expect(count(results, 201), JSON.stringify(results.map((r) => r.status))).toBe(N);
    expect(count(results, 402)).toBe(N);
    for (const r of results.filter((x) => x.status === 402)) expect(r.body).toMatchObject({ code: 'insufficient_balance', needed_cents: offer.price });
    expect(await balances(ws.workspaceId)).toEqual({ available: 0, held: offer.price * N });
    const { rows } = await database.pool.query('SELECT count(*)::int AS n FROM orders WHERE workspace_id = $1', [ws.workspaceId]);
    expect(rows[0].n).toBe(N);
    await expectLedgerInvariants(database);
  });

  /** An order in live_review through the publisher and buyer routes, the steps split across A and B. */
  async function liveOrder() {
    const p = await publisherWithOutlet(database);
    const ws = await workspaceWithKeys(database.pool, { balanceCents: 1_000_000 });
    // awaiting_acceptance lasts ≈ 1.8 s here; if the sweep wins the race to accept, try again.
    for (let attempt = 0; attempt < 3; attempt++) {
      const placed = await place(a, ws.spendKey, [p.offers[0]!.id]);
      expect(placed.status).toBe(201);
      const id = placed.body.data[0].id as number;
      const accepted = await call(b, 'POST', `/api/v1/publisher/orders/${id}/accept`, p.publisherKey);
      if (accepted.status === 409 && accepted.body.status === 'expired') continue;
      expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
      const drafted = await call(a, 'POST', `/api/v1/publisher/orders/${id}/draft`, p.publisherKey, {
        title: 'A draft worth approving',
        body: 'Some words [link](https://buyer.example/)',
      });
      expect(drafted.status, JSON.stringify(drafted.body)).toBe(200);
      const approvedDraft = await call(b, 'POST', `/api/v1/orders/${id}/approve-draft`, ws.readKey);
      expect(approvedDraft.status, JSON.stringify(approvedDraft.body)).toBe(200);
      const published = await call(a, 'POST', `/api/v1/publisher/orders/${id}/publish`, p.publisherKey, { live_url: `https://${p.domain}/post` });
      expect(published.status, JSON.stringify(published.body)).toBe(200);
      expect(published.body.data.status).toBe('live_review');
      return { p, ws, id };
    }
    throw new Error('the order expired before it could be accepted, three times');
  }

  it('(b) 40 concurrent approvals of one live order, split across both: one 200, the publisher paid once', async () => {
    const { p, ws, id } = await liveOrder();
    const keys = [ws.spendKey, ...(await spendKeys(ws, 3))]; // 10 requests per key
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => call(pick(i), 'POST', `/api/v1/orders/${id}/approve`, keys[i % keys.length]!)));
    expect(count(results, 200), JSON.stringify(results.map((r) => r.status))).toBe(1);
    expect(count(results, 409)).toBe(39);
    for (const r of results.filter((x) => x.status === 409)) expect(r.body).toMatchObject({ code: 'conflict', status: 'completed' });
    expect(await ledgerOf(id)).toEqual(['order_placed', 'order_released']);
    expect(await publisherBalances(database.pool, p.publisherId)).toEqual({ pending: p.offers[0]!.publisher_price_cents, payable: 0 });
    await expectLedgerInvariants(database);
  });

  /** What the sweeps of one process logged: the sum of each field, and any failure. */
  function sweepLog(server: ServerChild) {
    const total = { expired: 0, auto_approved: 0, drafts_auto_approved: 0, failed: 0 };
    for (const line of server.stdout().split('\n')) {
      let entry: { msg?: string; expired?: number; auto_approved?: number; drafts_auto_approved?: number };
      try {
        entry = JSON.parse(line);
      } catch {
        continue;
      }
      if (!entry || typeof entry !== 'object') continue;
      if (entry.msg === 'deadline sweep') {
        total.expired += entry.expired ?? 0;
        total.auto_approved += entry.auto_approved ?? 0;
        total.drafts_auto_approved += entry.drafts_auto_approved ?? 0;
      } else if (entry.msg === 'deadline sweep failed') total.failed++;
    }
    return total;
  }

  it('(c) the sweep runs in both processes and handles each expired order once', async () => {
    const ORDERS = 30;
    const p = await publisherWithOutlet(database, Array.from({ length: ORDERS }, (_, i) => ({ title: `Expiring ${i}` })));
    const total = p.offers.reduce((s, o) => s + o.price, 0);
    const ws = await workspaceWithKeys(database.pool, { balanceCents: total });
    // Six waves of five orders, 150 ms apart, alternating processes: deadlines fall due at
    // different moments, so the sweeps of both processes get their turns.
    const ids: number[] = [];
    for (let w = 0; w < 6; w++) {
      const res = await place(pick(w), ws.spendKey, p.offers.slice(w * 5, w * 5 + 5).map((o) => o.id));
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      ids.push(...(res.body.data as { id: number; status: string }[]).map((o) => o.id));
      await sleep(150);
    }
    expect(ids).toHaveLength(ORDERS);

    await eventually(
      async () => {
        const { rows } = await database.pool.query(`SELECT count(*)::int AS n FROM orders WHERE id = ANY($1) AND status = 'expired'`, [ids]);
        return rows[0].n === ORDERS;
      },
      `all ${ORDERS} orders expired`,
      30_000,
      200,
    );

    const { rows } = await database.pool.query(
      `SELECT o.id, count(t.id) FILTER (WHERE t.kind = 'order_refunded')::int AS refunds, count(t.id)::int AS txs
         FROM orders o LEFT JOIN ledger_transactions t ON t.order_id = o.id
        WHERE o.id = ANY($1) GROUP BY o.id ORDER BY o.id`,
      [ids],
    );
    expect(rows).toEqual(ids.sort((x, y) => x - y).map((id) => ({ id, refunds: 1, txs: 2 })));
    expect(await balances(ws.workspaceId)).toEqual({ available: total, held: 0 });
    await expectLedgerInvariants(database);

    // What the two processes say they did adds up to exactly the expired orders in the database:
    // no order was counted (refunded) by both.
    const { rows: expired } = await database.pool.query(`SELECT count(*)::int AS n FROM orders WHERE status = 'expired'`);
    await eventually(async () => sweepLog(a).expired + sweepLog(b).expired === expired[0].n, 'the sweep logs to add up', 5_000);
    const [la, lb] = [sweepLog(a), sweepLog(b)];
    expect(la.failed + lb.failed, describeChild(a) + describeChild(b)).toBe(0);
    expect(la.expired + lb.expired).toBe(expired[0].n);
  });

  async function mcpClient(server: ServerChild, key: string): Promise<Client> {
    const client = new Client({ name: 'scale-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${server.baseUrl}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    });
    await client.connect(transport);
    return client;
  }

  async function tool<T = Record<string, any>>(client: Client, name: string, args: Record<string, unknown>): Promise<T> {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
    return result.structuredContent as T;
  }

  it('(d) an MCP quote minted on one process is confirmed on the other, once', async () => {
    const p = await publisherWithOutlet(database, [{ content_by: 'buyer' }, { content_by: 'buyer', title: 'Second', publisher_price_cents: 5_000 }]);
    const ws = await workspaceWithKeys(database.pool, { balanceCents: 100_000 });
    const onA = await mcpClient(a, ws.spendKey);
    const onB = await mcpClient(b, ws.spendKey);
    try {
      const args = { offer_ids: p.offers.map((o) => o.id), target_url: 'https://buyer.example/', anchor_text: 'buyer' };
      const quote = await tool(onA, 'place-orders', args);
      expect(quote.stage).toBe('quote');
      expect(quote.confirmation_token).toEqual(expect.any(String));
      const total = p.offers.reduce((s, o) => s + o.price, 0);
      expect(quote.quote.total_cents).toBe(total);

      const done = await tool(onB, 'place-orders', { ...args, confirmation_token: quote.confirmation_token });
      expect(done).toMatchObject({ stage: 'done', replayed: false });
      expect(done.orders).toHaveLength(2);
      // The same token back on A replays B's result; nothing is spent twice.
      expect(await tool(onA, 'place-orders', { ...args, confirmation_token: quote.confirmation_token })).toEqual({ ...done, replayed: true });

      // A second quote confirmed on both processes at once: one placement, the other replays it.
      const second = await tool(onB, 'place-orders', args);
      const both = await Promise.all([
        tool(onA, 'place-orders', { ...args, confirmation_token: second.confirmation_token }),
        tool(onB, 'place-orders', { ...args, confirmation_token: second.confirmation_token }),
      ]);
      expect(both.filter((r) => r.replayed === false)).toHaveLength(1);
      expect(both[0]!.orders).toEqual(both[1]!.orders);

      const { rows } = await database.pool.query('SELECT count(*)::int AS n FROM orders WHERE workspace_id = $1', [ws.workspaceId]);
      expect(rows[0].n).toBe(4);
      expect(await balances(ws.workspaceId)).toEqual({ available: 100_000 - 2 * total, held: 2 * total });
      await expectLedgerInvariants(database);
    } finally {
      await Promise.all([onA.close(), onB.close()]);
    }
  });
});
