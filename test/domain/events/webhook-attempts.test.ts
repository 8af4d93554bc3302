import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { deliverDue } from '../../../src/domain/webhooks/deliver.js';
import { webhookSecretBox } from '../../../src/domain/webhooks/secret-box.js';
import { RESENDS_PER_MINUTE } from '../../../src/domain/webhooks/endpoints.js';
import type { OutboundClient } from '../../../src/outbound/http-client.js';
import { setupApp } from '../../helpers/app.js';
import { createTestDatabase } from '../../helpers/db.js';
import { bearer, workspaceWithKeys } from '../../helpers/fixtures.js';
import { orderKit } from '../../helpers/orders.js';
import { LiveClock, startReceiver } from '../../helpers/receiver.js';

const HOUR = 3_600_000;
const HANG = { timeout: 15_000, interval: 20 };
const target = 'https://buyer.example/product';

describe('an attempt that throws is a failed attempt (deliverDue on its own)', async () => {
  const database = await createTestDatabase({ max: 4 });
  afterAll(() => database.drop());
  const settings = { timeoutMs: 1000, retryBaseMs: 60_000, disableAfterMs: 72 * HOUR };
  const box = webhookSecretBox(database.pool, undefined);

  async function pendingDelivery(url: string, at: number) {
    const ws = await workspaceWithKeys(database.pool);
    const { rows: ep } = await database.pool.query(
      `INSERT INTO webhook_endpoints (workspace_id, url, secret, created_at) VALUES ($1, $2, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', $3) RETURNING id`,
      [ws.workspaceId, url, new Date(at)],
    );
    const { rows: ev } = await database.pool.query(
      `INSERT INTO events (position, type, workspace_id, actor, data, created_at)
       VALUES ((SELECT coalesce(max(position), 0) + 1 FROM events), 'workspace.topped_up', $1, 'system', '{}', $2) RETURNING id`,
      [ws.workspaceId, new Date(at)],
    );
    const { rows: d } = await database.pool.query(
      `INSERT INTO webhook_deliveries (event_id, endpoint_id, next_attempt_at, created_at) VALUES ($1, $2, $3, $3) RETURNING id`,
      [ev[0].id, ep[0].id, new Date(at)],
    );
    return { endpointId: ep[0].id as number, deliveryId: d[0].id as number, workspaceId: ws.workspaceId };
  }
  const delivery = async (id: number) => (await database.pool.query('SELECT * FROM webhook_deliveries WHERE id = $1', [id])).rows[0];

  for (const [how, post] of [
    ['throws', () => { throw new Error('boom'); }],
    ['rejects', () => Promise.reject(new Error('boom'))],
  ] as const) {
    it(`a client that ${how}: recorded with backoff, and it counts towards disabling the endpoint`, async () => {
      const client = { post, get: post, close() {} } as unknown as OutboundClient;
      let t = Date.parse('2026-11-01T00:00:00Z');
      const { endpointId, deliveryId, workspaceId } = await pendingDelivery('https://93.184.215.14/hook', t);
      expect(await deliverDue(database.pool, client, settings, () => t, box)).toBe(1);
      const first = await delivery(deliveryId);
      expect(first).toMatchObject({ status: 'pending', attempts: 1, last_error: 'could not send: boom', last_status_code: null });
      // Backoff: the base, plus up to a fifth.
      expect(first.next_attempt_at.getTime()).toBeGreaterThanOrEqual(t + 60_000);
      expect(first.next_attempt_at.getTime()).toBeLessThanOrEqual(t + 72_000);
      t = first.next_attempt_at.getTime() - 1; // a moment before the backoff ends (its length is random)
      expect(await deliverDue(database.pool, client, settings, () => t, box)).toBe(0); // not due yet
      t = first.next_attempt_at.getTime();
      expect(await deliverDue(database.pool, client, settings, () => t, box)).toBe(1);
      const second = await delivery(deliveryId);
      expect(second).toMatchObject({ status: 'pending', attempts: 2 });
      expect(second.next_attempt_at.getTime()).toBeGreaterThanOrEqual(t + 120_000);
      t = Date.parse('2026-11-01T00:00:00Z') + 73 * HOUR;
      expect(await deliverDue(database.pool, client, settings, () => t, box)).toBe(1);
      expect(await delivery(deliveryId)).toMatchObject({ status: 'failed', attempts: 3, next_attempt_at: null });
      const { rows } = await database.pool.query('SELECT disabled_at FROM webhook_endpoints WHERE id = $1', [endpointId]);
      expect(rows[0].disabled_at).toEqual(new Date(t));
      const told = await database.pool.query(`SELECT type FROM events WHERE workspace_id = $1 AND type = 'webhook_endpoint.disabled'`, [workspaceId]);
      expect(told.rowCount).toBe(1);
    });
  }
});

describe('webhook attempts in a running app', async () => {
  const h = await setupApp(
    { OUTBOUND_ALLOW_LOOPBACK: true, EVENTS_POLL_INTERVAL_MS: 20, WEBHOOK_TIMEOUT_MS: 1000, WEBHOOK_RETRY_BASE_MS: 20, RATE_LIMIT_PER_MINUTE: 100_000 },
    { clock: new LiveClock() },
  );
  const { place, pub, setup } = orderKit(h);
  const call = (method: 'GET' | 'POST' | 'DELETE', key: string, url: string, payload?: object) =>
    h.app.inject({ method, url, headers: bearer(key), ...(payload ? { payload } : {}) });
  const deliveries = async (key: string, id: number) => (await call('GET', key, `/api/v1/webhook-endpoints/${id}/deliveries`)).json().data;
  async function acceptedOrder(ws: { spendKey: string }, p: { publisherKey: string; offers: { id: number }[] }) {
    const order = (await place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: target })).json().data[0];
    expect((await pub(p.publisherKey, `${order.id}/accept`)).statusCode).toBe(200);
  }

  it('an upper-case scheme is stored as the parser writes it', async () => {
    const { ws } = await setup();
    const res = await call('POST', ws.readKey, '/api/v1/webhook-endpoints', { url: 'HTTPS://93.184.215.14/Hook?A=B', events: ['order.draft_submitted'] });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data.url).toBe('https://93.184.215.14/Hook?A=B');
    await call('DELETE', ws.readKey, `/api/v1/webhook-endpoints/${res.json().data.id}`);
  });

  it('an endpoint stored with an upper-case scheme is sent to over TLS, and the failure recorded with backoff', async () => {
    // A TCP listener: a TLS client's first byte is 0x16 (a handshake record); nothing answers it.
    const firstBytes: number[] = [];
    const sockets = new Set<Socket>();
    const server = createServer((socket) => {
      sockets.add(socket);
      socket.once('data', (b: Buffer) => (firstBytes.push(b[0]!), socket.destroy()));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    afterAll(() => new Promise((r) => (sockets.forEach((s) => s.destroy()), server.close(r))));
    const { ws, p } = await setup();
    const { rows } = await h.database.pool.query(
      `INSERT INTO webhook_endpoints (workspace_id, url, event_types, secret, created_at)
       VALUES ($1, $2, '{order.accepted}', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', now()) RETURNING id`,
      [ws.workspaceId, `HTTPS://127.0.0.1:${(server.address() as AddressInfo).port}/hook`],
    );
    await acceptedOrder(ws, p);
    await vi.waitFor(async () => {
      const [d] = await deliveries(ws.readKey, rows[0].id);
      expect(d).toMatchObject({ status: 'pending', response_status_code: null, error: expect.any(String), next_attempt_at: expect.any(String) });
      expect(d.attempts).toBeGreaterThanOrEqual(1);
    }, HANG);
    expect(firstBytes.length).toBeGreaterThanOrEqual(1);
    expect(firstBytes[0]).toBe(0x16);
    await call('DELETE', ws.readKey, `/api/v1/webhook-endpoints/${rows[0].id}`);
  });

  it('WEBHOOK_DISABLE_AFTER_HOURS, lower bound: still enabled and retrying after 71 hours of failures', async () => {
    let jumped = false;
    const failing = await startReceiver(() => (jumped ? 500 : 503));
    const { ws, p } = await setup();
    const ep = (await call('POST', ws.readKey, '/api/v1/webhook-endpoints', { url: failing.url(), events: ['order.accepted'] })).json().data;
    await acceptedOrder(ws, p);
    await vi.waitFor(() => expect(failing.received.length).toBeGreaterThanOrEqual(1), HANG);
    expect(h.config.WEBHOOK_DISABLE_AFTER_HOURS).toBe(72);
    jumped = true;
    h.clock.advance(71 * HOUR);
    // An attempt made after the jump has been answered (500, not 503) and its outcome recorded.
    await vi.waitFor(async () => expect((await deliveries(ws.readKey, ep.id))[0].response_status_code).toBe(500), HANG);
    const [d] = await deliveries(ws.readKey, ep.id);
    expect(d).toMatchObject({ status: 'pending', next_attempt_at: expect.any(String) });
    const list = (await call('GET', ws.readKey, '/api/v1/webhook-endpoints')).json().data;
    expect(list.find((e: { id: number }) => e.id === ep.id).disabled_at).toBeNull();
    const before = failing.received.length;
    await vi.waitFor(() => expect(failing.received.length).toBeGreaterThan(before), HANG); // and it keeps retrying
    await call('DELETE', ws.readKey, `/api/v1/webhook-endpoints/${ep.id}`);
  });

  it(`resend: at most ${RESENDS_PER_MINUTE} a minute per endpoint, then 429 with Retry-After`, async () => {
    const hook = await startReceiver();
    const { ws, p } = await setup();
    const ep = (await call('POST', ws.readKey, '/api/v1/webhook-endpoints', { url: hook.url(), events: ['order.accepted'] })).json().data;
    const other = (await call('POST', ws.readKey, '/api/v1/webhook-endpoints', { url: hook.url('/other'), events: ['order.accepted'] })).json().data;
    await acceptedOrder(ws, p);
    await vi.waitFor(() => expect(hook.received).toHaveLength(2), HANG);
    const [d] = await deliveries(ws.readKey, ep.id);
    const resend = (endpoint: number, delivery: number) => call('POST', ws.readKey, `/api/v1/webhook-endpoints/${endpoint}/deliveries/${delivery}/resend`);
    const statuses: number[] = [];
    for (let i = 0; i < RESENDS_PER_MINUTE; i++) statuses.push((await resend(ep.id, d.id)).statusCode);
    expect(statuses).toEqual(Array(RESENDS_PER_MINUTE).fill(202));
    const refused = await resend(ep.id, d.id);
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.json()).toMatchObject({ code: 'rate_limited', message: expect.stringContaining(`${RESENDS_PER_MINUTE}`), retry_after: Number(refused.headers['retry-after']) });
    // Another endpoint has its own allowance.
    const [o] = await deliveries(ws.readKey, other.id);
    expect((await resend(other.id, o.id)).statusCode).toBe(202);
    await vi.waitFor(() => expect(hook.received).toHaveLength(2 + RESENDS_PER_MINUTE + 1), HANG);
  });
});
