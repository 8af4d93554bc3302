import { afterAll, describe, expect, it, vi } from 'vitest';
import { refuseTarget } from '../../../src/outbound/address-policy.js';
import { createOutboundClient } from '../../../src/outbound/http-client.js';
import { setupApp } from '../../helpers/app.js';
import { createTestDatabase } from '../../helpers/db.js';
import { bearer } from '../../helpers/fixtures.js';
import { orderKit } from '../../helpers/orders.js';
import { LiveClock, startReceiver } from '../../helpers/receiver.js';

const HANG = { timeout: 20_000, interval: 20 };
const fast = { EVENTS_POLL_INTERVAL_MS: 20, WEBHOOK_TIMEOUT_MS: 1000, WEBHOOK_RETRY_BASE_MS: 20, RATE_LIMIT_PER_MINUTE: 100_000 };

describe('no requests to private addresses (loopback not allowed)', async () => {
  const h = await setupApp({ ...fast, OUTBOUND_ALLOW_LOOPBACK: false }, { clock: new LiveClock() });
  const { place, pub, setup } = orderKit(h);

  it('refuses, at creation, hosts that resolve to loopback, private, link-local or metadata addresses', async () => {
    const { ws } = await setup();
    for (const url of ['https://localhost/hook', 'https://127.0.0.1/hook', 'https://[::1]/hook', 'https://192.168.1.10/hook', 'https://169.254.169.254/latest/meta-data', 'https://[::ffff:127.0.0.1]/hook', 'https://0.0.0.0/hook', 'http://localhost/hook']) {
      const res = await h.app.inject({ method: 'POST', url: '/api/v1/webhook-endpoints', headers: bearer(ws.readKey), payload: { url } });
      expect(res.statusCode, url).toBe(422);
      expect(Object.keys(res.json().errors), url).toEqual(['url']);
    }
    expect(await refuseTarget('https://localhost/hook', { allowLoopback: true })).toBeNull();
    expect(await refuseTarget('http://localhost/hook', { allowLoopback: true })).toBeNull();
    expect(await refuseTarget('https://10.1.2.3/hook', { allowLoopback: true })).not.toBeNull();
    expect(await refuseTarget('https://93.184.216.34/hook', { allowLoopback: false })).toBeNull();
  });

  it('refuses, at creation, a URL with whitespace or invisible characters inside it (not stored re-encoded)', async () => {
    const { ws } = await setup();
    for (const url of ['https://93.184.216.34/ a', 'https://93.184.216.34/a\tb', 'https://93.184.216.34/a\nb', 'https://93.184.216.34/a\u200bb', 'https://93.184.216.34/a"b']) {
      const res = await h.app.inject({ method: 'POST', url: '/api/v1/webhook-endpoints', headers: bearer(ws.readKey), payload: { url } });
      expect(res.statusCode, JSON.stringify(url)).toBe(422);
      expect(res.json().errors, JSON.stringify(url)).toEqual({ url: [expect.stringMatching(/^must not contain whitespace, control or invisible characters/)] });
    }
    const list = await h.app.inject({ url: '/api/v1/webhook-endpoints', headers: bearer(ws.readKey) });
    expect(list.json().data).toEqual([]);
    // Text that is no URL at all is told that, not which of its characters are wrong.
    const notUrl = await h.app.inject({ method: 'POST', url: '/api/v1/webhook-endpoints', headers: bearer(ws.readKey), payload: { url: 'not a url' } });
    expect(notUrl.json().errors).toEqual({ url: ['must be an absolute URL'] });
    // Whitespace around the URL is trimmed, as the body's other text fields are.
    const trimmed = await h.app.inject({ method: 'POST', url: '/api/v1/webhook-endpoints', headers: bearer(ws.readKey), payload: { url: ' https://93.184.216.34/hook\n' } });
    expect(trimmed.statusCode).toBe(201);
    expect(trimmed.json().data.url).toBe('https://93.184.216.34/hook');
  });

  it('refuses, at delivery, a host that resolves to loopback now (checked on the connected address)', async () => {
    const hook = await startReceiver();
    const { ws, p } = await setup();
    // As if the name had resolved to a public address when the endpoint was created.
    const { rows } = await h.database.pool.query(
      `INSERT INTO webhook_endpoints (workspace_id, url, secret, created_at) VALUES ($1, $2, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', now()) RETURNING id`,
      [ws.workspaceId, hook.url().replace('127.0.0.1', 'localhost')],
    );
    const order = (await place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: 'https://buyer.example/' })).json().data[0];
    await pub(p.publisherKey, `${order.id}/accept`);
    await vi.waitFor(async () => {
      const [d] = (await h.app.inject({ method: 'GET', url: `/api/v1/webhook-endpoints/${rows[0].id}/deliveries`, headers: bearer(ws.readKey) })).json().data;
      expect(d.error).toMatch(/^refused: /);
    }, HANG);
    expect(hook.received).toEqual([]);
  });

  it('the outbound client refuses loopback literals and names alike, and follows no redirect', async () => {
    const hook = await startReceiver((r) => (r.headers.host?.startsWith('127.') ? 302 : 200));
    const strict = createOutboundClient({ allowLoopback: false });
    for (const url of [hook.url(), hook.url().replace('127.0.0.1', 'localhost')]) {
      const r = await strict.post(url, '{}', {}, 2000);
      expect(r, url).toMatchObject({ status: null, error: expect.stringMatching(/^refused: /) });
    }
    strict.close();
    expect(hook.received).toEqual([]);
    const loose = createOutboundClient({ allowLoopback: true });
    expect(await loose.post(hook.url(), '{}', {}, 2000)).toMatchObject({ status: 302, error: null });
    loose.close();
    expect(hook.received).toHaveLength(1);
  });
});

describe('two app instances on one database', async () => {
  // Two apps share its pool while 100 requests and both delivery workers use it: a connection may be
  // waited for long on a loaded machine, and this test is not about answering 503 then.
  const database = await createTestDatabase({ max: 20, connectTimeoutMs: 60_000 });
  // Registered first, so it runs after both apps have closed.
  afterAll(() => database.drop());
  // The longest attempt timeout allowed, longer than this test may run: no attempt here can time
  // out and be retried (on a loaded machine one can outlast a short timeout), so every request
  // beyond one per event is an attempt sent twice.
  const config = { ...fast, WEBHOOK_TIMEOUT_MS: 60_000, OUTBOUND_ALLOW_LOOPBACK: true };
  const one = await setupApp(config, { database, clock: new LiveClock() });
  const two = await setupApp(config, { database, clock: new LiveClock() });
  const { place, pub, setup } = orderKit(one);

  it('deliver each attempt once, between them', { timeout: 90_000 }, async () => {
    const hook = await startReceiver();
    const { ws, p } = await setup([{}, {}, {}, {}]);
    const created = await two.app.inject({ method: 'POST', url: '/api/v1/webhook-endpoints', headers: bearer(ws.readKey), payload: { url: hook.url(), events: ['order.message_received'] } });
    expect(created.statusCode).toBe(201);
    const orders = (await place(ws.spendKey, { offer_ids: p.offers.map((o) => o.id), target_url: 'https://buyer.example/' })).json().data;
    const sends = [];
    for (let i = 0; i < 100; i++) sends.push(pub(p.publisherKey, `${orders[i % orders.length].id}/messages`, { body: `message ${i}` }));
    expect((await Promise.all(sends)).map((r) => r.statusCode)).toEqual(Array(100).fill(201));
    // Every delivery's outcome recorded: each attempt claimed has been sent and answered.
    const deliveries = async () =>
      (await database.pool.query<{ status: string; attempts: number }>('SELECT status, attempts FROM webhook_deliveries WHERE endpoint_id = $1', [created.json().data.id])).rows;
    await vi.waitFor(async () => expect((await deliveries()).filter((d) => d.status === 'delivered')).toHaveLength(100), { timeout: 60_000, interval: 20 });
    expect((await deliveries()).map((d) => d.attempts)).toEqual(Array(100).fill(1));
    expect(new Set(hook.received.map((r) => r.headers['webhook-id'])).size).toBe(100);
    expect(hook.received).toHaveLength(100);
  });
});
