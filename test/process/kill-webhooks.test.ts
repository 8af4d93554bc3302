import { afterAll, describe, expect, it, vi } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { withTransaction } from '../../src/db/handle.js';
import { createEndpoint } from '../../src/domain/webhooks/endpoints.js';
import { webhookSecretBox } from '../../src/domain/webhooks/secret-box.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { spawnServer } from '../helpers/child.js';
import { createTestDatabase } from '../helpers/db.js';
import { workspaceWithKeys } from '../helpers/fixtures.js';
import { startReceiver } from '../helpers/receiver.js';

const database = await createTestDatabase();
afterAll(() => database.drop());

const env = {
  DATABASE_URL: database.url,
  RATE_LIMIT_PER_MINUTE: '1000000',
  ORDER_SWEEP_INTERVAL_MS: '0',
  OUTBOUND_ALLOW_LOOPBACK: 'true',
  EVENTS_POLL_INTERVAL_MS: '50',
  WEBHOOK_TIMEOUT_MS: '1000',
};

async function post(baseUrl: string, key: string, path: string, body: object, headers: Record<string, string> = {}) {
  const res = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  return { status: res.status, body: (await res.json()) as { data: unknown } };
}

describe('SIGKILL between a change’s commit and its delivery', () => {
  it('the restarted server delivers the event', { timeout: 120_000 }, async () => {
    // The first attempt is left hanging: the server dies with it in flight, its outcome unrecorded.
    const hook = await startReceiver((_, n) => (n === 1 ? 'hang' : 200));
    const ws = await workspaceWithKeys(database.pool);
    const p = await publisherWithOutlet(database);
    const endpoint = await withTransaction(database.pool, (tx) =>
      createEndpoint(tx, { party: 'buyer', workspaceId: ws.workspaceId }, { url: hook.url(), events: ['order.accepted'] }, Date.now(), webhookSecretBox(database.pool, undefined)),
    );

    const server = await spawnServer(env);
    await server.waitHealthy(30_000);
    const placed = await post(server.baseUrl, ws.spendKey, '/api/v1/orders', { offer_ids: [p.offers[0]!.id], target_url: 'https://buyer.example/' }, { 'idempotency-key': 'kill-webhooks-1' });
    expect(placed.status).toBe(201);
    const orderId = (placed.body.data as Array<{ id: number }>)[0]!.id;
    expect((await post(server.baseUrl, p.publisherKey, `/api/v1/publisher/orders/${orderId}/accept`, {})).status).toBe(200);
    await vi.waitFor(() => expect(hook.received).toHaveLength(1), { timeout: 30_000, interval: 20 });
    server.proc.kill('SIGKILL');
    await server.exited;
    const { rows: claimed } = await database.pool.query(`SELECT status, attempts FROM webhook_deliveries WHERE endpoint_id = $1`, [endpoint.id]);
    expect(claimed).toEqual([{ status: 'pending', attempts: 1 }]);

    const again = await spawnServer(env);
    await again.waitHealthy(30_000);
    try {
      // The claim of the lost attempt lapses (timeout + margin), then the new process sends it.
      await vi.waitFor(async () => {
        const { rows } = await database.pool.query(`SELECT status, attempts FROM webhook_deliveries WHERE endpoint_id = $1`, [endpoint.id]);
        expect(rows).toEqual([{ status: 'delivered', attempts: 2 }]);
      }, { timeout: 60_000, interval: 100 });
    } finally {
      await again.stop('SIGTERM');
    }
    expect(hook.received).toHaveLength(2);
    expect(hook.received[1]!.headers['webhook-id']).toBe(hook.received[0]!.headers['webhook-id']);
    const event = new Webhook(endpoint.secret).verify(hook.received[1]!.body, hook.received[1]!.headers as Record<string, string>);
    expect(event).toMatchObject({ type: 'order.accepted', data: { id: orderId, status: 'writing' } });
  });
});
