import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import { migrateOnly } from '../../src/db/migrate.js';
import { createKey } from '../../src/domain/keys/key-service.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { cleanupChildren, describeChild, eventually, type ServerChild, sleep, spawnServer } from '../helpers/child.js';
import { bearer, workspaceWithKeys, type WorkspaceFixture } from '../helpers/fixtures.js';
import { expectLedgerInvariants } from '../helpers/ledger-invariants.js';
import { startTempEmbedded } from '../helpers/pg-server.js';

// PostgreSQL stopped under load, with the real server as a child process: every request is
// answered (no hanging socket), with 200/201/402 before the outage and a prompt 503 `unavailable`
// in Interface A's shape during it (never a 500); /readyz follows the database; once PostgreSQL
// is back the service resumes by itself, and the money is intact: every order answered 201 exists
// with its placement in the ledger, no order lacks it, and retrying the requests that got a 503
// with their Idempotency-Keys never places an order twice.

const CONNECT_TIMEOUT_MS = 1000;
const ME_LOOPS = 10;
const ORDER_LOOPS = 10;
const PAUSE_MS = 20; // between one loop's requests: a steady load, not a flood
// A hang detector, not a speed check: far above what a loaded machine takes.
const FETCH_TIMEOUT_MS = 20_000;

interface Result {
  kind: 'me' | 'order';
  loop: number;
  start: number;
  end: number;
  status: number | 'timeout' | 'network';
  body?: any;
  requestId?: string | null;
  idem?: string;
  workspace?: number;
  /** /me with a key used for the first time (not in the server's key cache). */
  key?: string;
  cold?: boolean;
  error?: string;
}

let pgServer: Awaited<ReturnType<typeof startTempEmbedded>>;
let pgRunning = false;
let database: Database;
let server: ServerChild;
let offerId: number;
let price: number;
const warmKeys: string[] = [];
const coldKeys: string[] = [];
const spenders: WorkspaceFixture[] = [];

beforeAll(async () => {
  pgServer = await startTempEmbedded();
  pgRunning = true;
  database = createDatabase({ url: pgServer.url, max: 5, connectTimeoutMs: 5000, onError: () => {} });
  await migrateOnly(database.pool);
  const p = await publisherWithOutlet(database, [{ publisher_price_cents: 1_000 }]);
  offerId = p.offers[0]!.id;
  price = p.offers[0]!.price;
  for (let i = 0; i < ORDER_LOOPS; i++) {
    // The last workspace can pay for two orders, then answers 402.
    spenders.push(await workspaceWithKeys(database.pool, { balanceCents: i === ORDER_LOOPS - 1 ? price * 2 : price * 5_000 }));
  }
  for (let i = 0; i < ME_LOOPS; i++) warmKeys.push((await workspaceWithKeys(database.pool)).readKey);
  // Keys used once each, so some /me requests always look their key up in the database.
  for (let i = 0; i < 400; i += 10) {
    const batch = await Promise.all(Array.from({ length: 10 }, () => createKey(database.pool, { workspaceId: spenders[0]!.workspaceId })));
    coldKeys.push(...batch.map((k) => k.key));
  }
  server = await spawnServer({
    DATABASE_URL: pgServer.url,
    DATABASE_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
    RATE_LIMIT_PER_MINUTE: '1000000',
    ORDER_SWEEP_INTERVAL_MS: '0',
  });
  await server.waitHealthy(45_000);
}, 90_000);

afterAll(async () => {
  await cleanupChildren();
  await database?.close().catch(() => {});
  if (pgRunning) await pgServer.stop().catch(() => {});
  if (pgServer) rmSync(pgServer.dataDir, { recursive: true, force: true });
}, 30_000);

async function call(r: Omit<Result, 'start' | 'end' | 'status'>, url: string, init: RequestInit): Promise<Result> {
  const start = Date.now();
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // kept as text: the assertions below say what was expected
    }
    return { ...r, start, end: Date.now(), status: res.status, body, requestId: res.headers.get('x-request-id') };
  } catch (err) {
    const e = err as Error;
    const status = e.name === 'TimeoutError' ? 'timeout' : 'network';
    return { ...r, start, end: Date.now(), status, error: `${e.name}: ${e.message} ${String((e as { cause?: unknown }).cause ?? '')}` };
  }
}

const me = (loop: number, key: string, cold = false) =>
  call({ kind: 'me', loop, key, cold }, `${server.baseUrl}/api/v1/me`, { headers: bearer(key) });

const placeOrder = (loop: number, ws: WorkspaceFixture, idem: string) =>
  call({ kind: 'order', loop, idem, workspace: ws.workspaceId }, `${server.baseUrl}/api/v1/orders`, {
    method: 'POST',
    headers: { ...bearer(ws.spendKey), 'idempotency-key': idem, 'content-type': 'application/json' },
    body: JSON.stringify({ offer_ids: [offerId], target_url: 'https://buyer.example/' }),
  });

function expectUnavailable(r: Result) {
  expect(r.status, JSON.stringify(r)).toBe(503);
  expect(Object.keys(r.body).sort(), JSON.stringify(r.body)).toEqual(['code', 'message', 'request_id']);
  expect(r.body.code).toBe('unavailable');
  expect(r.body.request_id).toBe(r.requestId);
  expect(JSON.stringify(r.body)).not.toMatch(/ECONN|127\.0\.0\.1|postgres|select|terminat|\.ts:\d+/i);
}

describe('PostgreSQL stopped under load', () => {
  it('answers every request, 503 while down, and resumes with the ledger intact', async () => {
    const results: Result[] = [];
    let running = true;
    let cold = 0;
    let idemCounter = 0;
    const loops = [
      ...Array.from({ length: ME_LOOPS }, async (_, loop) => {
        for (let i = 0; running; i++) {
          // Every sixth request with a key never seen before (a cache miss), else a cached key.
          const fresh = i % 6 === 5 && cold < coldKeys.length;
          results.push(await (fresh ? me(loop, coldKeys[cold++]!, true) : me(loop, warmKeys[loop]!)));
          await sleep(PAUSE_MS);
        }
      }),
      ...Array.from({ length: ORDER_LOOPS }, async (_, loop) => {
        while (running) {
          results.push(await placeOrder(loop, spenders[loop]!, `fault-${loop}-${++idemCounter}`));
          await sleep(PAUSE_MS);
        }
      }),
    ];

    // Each phase lasts until enough requests have been answered in it, not for a set time: a
    // loaded machine answers fewer a second.
    const answeredSince = (t: number, pred: (r: Result) => boolean = () => true) => results.filter((r) => r.start > t && pred(r)).length;
    const t0 = Date.now();
    await eventually(async () => answeredSince(t0) > 60, '60 requests answered before the outage', 30_000);
    const stopBegin = Date.now();
    await pgServer.stop();
    pgRunning = false;
    const stopDone = Date.now();
    await eventually(async () => answeredSince(stopDone) > 30, '30 requests answered during the outage', 30_000);
    expect(server.hasExited(), `the server exited when PostgreSQL stopped${describeChild(server)}`).toBe(false);
    const ready = await fetch(`${server.baseUrl}/readyz`, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: 'unavailable' });
    await eventually(async () => answeredSince(stopDone, (r) => r.cold === true) > 0, 'an uncached key answered during the outage', 30_000);

    const restartBegin = Date.now();
    await pgServer.start();
    pgRunning = true;
    const restartDone = Date.now();
    await eventually(
      async () => (await fetch(`${server.baseUrl}/readyz`, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) })).status === 200,
      '/readyz 200 again',
      15_000,
    );
    await eventually(
      async () => (await fetch(`${server.baseUrl}/api/v1/me`, { headers: bearer(warmKeys[0]!), signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) })).status === 200,
      '/me 200 again',
      15_000,
    );
    const recovered = Date.now();
    await eventually(async () => answeredSince(recovered + 500) > 30, '30 requests answered after recovery', 30_000);
    running = false;
    await Promise.all(loops);

    const of = (pred: (r: Result) => boolean) => results.filter(pred);
    const statuses = (rs: Result[]) => [...new Set(rs.map((r) => r.status))].sort();
    const before = of((r) => r.end < stopBegin);
    const down = of((r) => r.start > stopDone && r.end <= restartBegin); // <=: an answer in the very millisecond the restart began counts
    const after = of((r) => r.start > recovered + 500);
    const unavailable = of((r) => r.status === 503);
    const summary = {
      requests: results.length,
      before: { n: before.length, statuses: statuses(before) },
      down: { n: down.length, statuses: statuses(down), uncachedKeys: down.filter((r) => r.cold).length },
      after: { n: after.length, statuses: statuses(after) },
      unavailable: unavailable.length,
      max503LatencyMs: Math.max(...unavailable.map((r) => r.end - r.start)),
      maxLatencyMs: Math.max(...results.map((r) => r.end - r.start)),
      stopMs: stopDone - stopBegin,
      restartMs: restartDone - restartBegin,
      recoveredAfterRestartMs: recovered - restartDone,
    };
    console.info('database down:', JSON.stringify(summary));

    // Every request was answered: nothing timed out, no socket was dropped.
    const unanswered = of((r) => typeof r.status !== 'number');
    expect(unanswered.slice(0, 5), `unanswered requests${describeChild(server)}`).toEqual([]);
    // Only these statuses, ever: never a 500.
    expect(statuses(results).every((s) => [200, 201, 402, 503].includes(s as number)), JSON.stringify(summary)).toBe(true);
    // Before the outage: served.
    expect(before.length).toBeGreaterThan(50);
    expect(statuses(before).every((s) => [200, 201, 402].includes(s as number)), JSON.stringify(summary)).toBe(true);
    expect(statuses(before)).toEqual(expect.arrayContaining([200, 201]));
    expect(statuses(results)).toContain(402);
    // While down: a 503 in the contract's shape, for cached and uncached keys and for orders.
    expect(down.length).toBeGreaterThan(20);
    for (const r of down) expectUnavailable(r);
    expect(new Set(down.map((r) => r.kind))).toEqual(new Set(['me', 'order']));
    expect(down.filter((r) => r.cold).length, 'uncached keys during the outage').toBeGreaterThan(0);
    for (const r of unavailable) expectUnavailable(r);
    // Never a hanging request: each was answered within its fetch deadline (unanswered above is
    // empty). How promptly, on this machine, is in the summary line.
    // After recovery: served again, without help.
    expect(after.length).toBeGreaterThan(20);
    expect(statuses(after).every((s) => [200, 201, 402].includes(s as number)), JSON.stringify(summary)).toBe(true);
    expect(server.hasExited()).toBe(false);
    expect(server.stdout() + server.stderr()).not.toContain('"level":60');

    // A key whose lookup failed during the outage was not remembered as unknown: it works now.
    for (const r of down.filter((r) => r.cold).slice(0, 20)) {
      const again = await me(r.loop, r.key!);
      expect(again.status, `key first used during the outage`).toBe(200);
    }

    // Retrying every order that got a 503 with its own Idempotency-Key: placed now, or replayed
    // if its transaction had committed before the answer was lost; never placed twice.
    const retryable = of((r) => r.kind === 'order' && r.status === 503);
    const retries: Result[] = [];
    for (let i = 0; i < retryable.length; i += 10) {
      retries.push(
        ...(await Promise.all(
          retryable.slice(i, i + 10).map((r) => placeOrder(r.loop, spenders[r.loop]!, r.idem!)),
        )),
      );
    }
    expect(statuses(retries).every((s) => s === 201 || s === 402), JSON.stringify(statuses(retries))).toBe(true);

    // The database agrees with what the clients were told.
    const placed = new Map<string, number[]>();
    for (const r of [...of((r) => r.kind === 'order' && r.status === 201), ...retries.filter((r) => r.status === 201)]) {
      const ids = (r.body.data as { id: number }[]).map((o) => o.id);
      const seen = placed.get(r.idem!);
      if (seen) expect(ids, `replay of ${r.idem}`).toEqual(seen);
      placed.set(r.idem!, ids);
    }
    const { rows: orders } = await database.pool.query<{ id: number }>('SELECT id FROM orders');
    const answered = [...placed.values()].flat();
    expect(new Set(answered).size, 'one order per Idempotency-Key').toBe(answered.length);
    // Orders answered 201 exist, and every order is one a client was (eventually) told about.
    expect(orders.map((o) => Number(o.id)).sort((a, b) => a - b)).toEqual([...answered].sort((a, b) => a - b));
    const { rows: unplaced } = await database.pool.query(
      `SELECT o.id FROM orders o
        WHERE NOT EXISTS (SELECT 1 FROM ledger_transactions t WHERE t.order_id = o.id AND t.kind = 'order_placed')`,
    );
    expect(unplaced, 'orders without their order_placed transaction').toEqual([]);
    await expectLedgerInvariants(database);
    console.info('database down, retries:', JSON.stringify({ retried: retries.length, statuses: statuses(retries), orders: orders.length }));
  }, 240_000);
});
