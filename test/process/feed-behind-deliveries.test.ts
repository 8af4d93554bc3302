import { afterAll, describe, expect, it, vi } from 'vitest';
import { withTransaction } from '../../src/db/handle.js';
import { createEndpoint } from '../../src/domain/webhooks/endpoints.js';
import { webhookSecretBox } from '../../src/domain/webhooks/secret-box.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { type ServerChild, spawnServer } from '../helpers/child.js';
import { createTestDatabase } from '../helpers/db.js';
import { workspaceWithKeys } from '../helpers/fixtures.js';
import { startReceiver } from '../helpers/receiver.js';

// One tenant's endpoints that never answer, with a backlog of deliveries that keep coming due,
// must not hold back another tenant's feed: its events are positioned while the backlog is still
// being worked through, in two processes sharing the database.

const database = await createTestDatabase();
afterAll(() => database.drop());

/** Deliveries waiting for the silent endpoint: at 2 processes × 50 a claim, each attempt hanging 2 s, tens of seconds of work. */
const BACKLOG = 3_000;

const env = {
  DATABASE_URL: database.url,
  RATE_LIMIT_PER_MINUTE: '1000000',
  ORDER_SWEEP_INTERVAL_MS: '0',
  OUTBOUND_ALLOW_LOOPBACK: 'true',
  EVENTS_POLL_INTERVAL_MS: '50',
  WEBHOOK_TIMEOUT_MS: '2000',
  // A failed attempt comes due again at once: the backlog never runs dry by itself.
  WEBHOOK_RETRY_BASE_MS: '10',
};

async function placeOrder(baseUrl: string, key: string, offerId: number, idempotencyKey: string): Promise<number> {
  const res = await fetch(`${baseUrl}/api/v1/orders`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
    body: JSON.stringify({ offer_ids: [offerId], target_url: 'https://buyer.example/' }),
    signal: AbortSignal.timeout(30_000),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { data: Array<{ id: number }> }).data[0]!.id;
}

async function feed(baseUrl: string, key: string): Promise<Array<{ type: string; data: { id: number } }>> {
  const res = await fetch(`${baseUrl}/api/v1/events?after=evt_0000000000000000&limit=100`, {
    headers: { authorization: `Bearer ${key}` },
    signal: AbortSignal.timeout(30_000),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: Array<{ type: string; data: { id: number } }> }).data;
}

const untried = async (endpointId: number) =>
  (
    await database.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'pending' AND attempts = 0`,
      [endpointId],
    )
  ).rows[0]!.n;

describe('a silent endpoint’s backlog and another tenant’s feed', () => {
  it('positions the other tenant’s event while the backlog is still being worked through', { timeout: 180_000 }, async () => {
    const silent = await startReceiver(() => 'hang');
    const noisy = await workspaceWithKeys(database.pool);
    const other = await workspaceWithKeys(database.pool);
    const p = await publisherWithOutlet(database);
    const endpoint = await withTransaction(database.pool, (tx) =>
      createEndpoint(tx, { party: 'buyer', workspaceId: noisy.workspaceId }, { url: silent.url() }, Date.now(), webhookSecretBox(database.pool, undefined)),
    );

    const servers: ServerChild[] = [await spawnServer(env), await spawnServer(env)];
    try {
      await Promise.all(servers.map((s) => s.waitHealthy(60_000)));
      const [a, b] = servers as [ServerChild, ServerChild];

      // The noisy tenant's first event reaches its endpoint, which never answers.
      await placeOrder(a.baseUrl, noisy.spendKey, p.offers[0]!.id, 'backlog-first');
      await vi.waitFor(() => expect(silent.received.length).toBeGreaterThan(0), { timeout: 60_000, interval: 20 });
      // Then a backlog for it, all due now (as resends of many deliveries would make it).
      await database.pool.query(
        `INSERT INTO webhook_deliveries (event_id, endpoint_id, next_attempt_at, created_at)
         SELECT d.event_id, d.endpoint_id, now(), now() FROM webhook_deliveries d, generate_series(1, $2) WHERE d.endpoint_id = $1`,
        [endpoint.id, BACKLOG],
      );
      await vi.waitFor(() => expect(silent.received.length).toBeGreaterThan(1), { timeout: 60_000, interval: 20 });

      // Another tenant places an order through the other process and follows its feed.
      const orderId = await placeOrder(b.baseUrl, other.spendKey, p.offers[0]!.id, 'other-tenant');
      let seen: Array<{ type: string; data: { id: number } }> = [];
      let untriedWhenSeen = -1;
      await vi.waitFor(
        async () => {
          seen = await feed(a.baseUrl, other.readKey);
          expect(seen.map((e) => [e.type, e.data.id])).toEqual([['order.placed', orderId]]);
          // Counted after the read: the backlog only shrinks, so it was at least this big then.
          untriedWhenSeen = await untried(endpoint.id);
        },
        { timeout: 120_000, interval: 50 },
      );
      // The event was in the feed while deliveries of the backlog had not even been tried once.
      expect(untriedWhenSeen).toBeGreaterThan(0);
    } finally {
      await Promise.all(servers.map((s) => s.stop('SIGTERM', 60_000)));
    }
  });
});
