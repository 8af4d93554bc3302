import { describe, expect, it, vi } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { eventTypes } from '../../../src/domain/events/event-types.js';
import { createKey, revokeKey } from '../../../src/domain/keys/key-service.js';
import { approvalRequests } from '../../../src/domain/approvals/decide.js';
import { expireApprovals } from '../../../src/domain/approvals/expiry.js';
import { durationsFrom } from '../../../src/domain/orders/states.js';
import { addMember } from '../../../src/domain/users/memberships.js';
import { createUser } from '../../../src/domain/users/user-service.js';
import { topUpWorkspace } from '../../../src/domain/workspaces/top-up.js';
import { adjustBalance } from '../../../src/domain/billing/adjustments.js';
import { createBilling } from '../../../src/domain/billing/billing-deps.js';
import { webhookSecretBox } from '../../../src/domain/webhooks/secret-box.js';
import { confirmTopUp } from '../../../src/domain/billing/confirm.js';
import { markPayoutFailed, markPayoutSent } from '../../../src/domain/billing/payout-decide.js';
import { setDestination } from '../../../src/domain/billing/payout-details.js';
import { requestPayout } from '../../../src/domain/billing/payouts.js';
import { makePayable } from '../../helpers/payouts.js';
import { valueOf } from '../../../src/domain/idempotency/record-once.js';
import { webhookDelivery, webhookEndpointWithSecret } from '../../../src/schemas/events.js';
import { setupApp } from '../../helpers/app.js';
import { bearer } from '../../helpers/fixtures.js';
import { articleFor, DAY, FAILING_LIVE_CHECKS, orderKit, PASSING_LIVE_CHECKS } from '../../helpers/orders.js';
import { openApiSchemas } from '../../helpers/openapi-schema.js';
import { LiveClock, type Received, startReceiver } from '../../helpers/receiver.js';

const fast = { OUTBOUND_ALLOW_LOOPBACK: true, EVENTS_POLL_INTERVAL_MS: 20, WEBHOOK_RETRY_BASE_MS: 20, RATE_LIMIT_PER_MINUTE: 100_000 };
// An attempt timeout longer than any test here runs: on a loaded machine an attempt may take longer
// than a short one, and be sent again, so the requests a receiver gets would depend on the machine's
// speed. Timing out is tested on an app of its own, below.
const h = await setupApp({ ...fast, WEBHOOK_TIMEOUT_MS: 60_000 }, { clock: new LiveClock() });
const { place, buyer, pub, sweep, setup, recordLiveCheck } = orderKit(h);
const target = 'https://buyer.example/product';
const HANG = { timeout: 15_000, interval: 20 };

const call = (method: 'GET' | 'POST' | 'DELETE', key: string, url: string, payload?: object) =>
  h.app.inject({ method, url, headers: bearer(key), ...(payload ? { payload } : {}) });
async function endpoint(key: string, url: string, events?: string[], prefix = '/api/v1') {
  const res = await call('POST', key, `${prefix}/webhook-endpoints`, { url, ...(events ? { events } : {}) });
  expect(res.statusCode, res.body).toBe(201);
  return webhookEndpointWithSecret.parse(res.json().data);
}
const verify = (secret: string, r: Received) => new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as { type: string; data: unknown };
const typesOf = (rs: Received[]) => rs.map((r) => JSON.parse(r.body).type as string);
// Each delivered body, checked with Ajv against the OpenAPI document's webhook of its owner's kind
// (compiled here, before any receiver runs in this process).
const schemaAt = await openApiSchemas(h.app);
const webhookBody = {
  workspace: schemaAt('/webhooks/event/post/requestBody/content/application~1json/schema'),
  publisher: schemaAt('/webhooks/publisherEvent/post/requestBody/content/application~1json/schema'),
};
const documentErrors = (owner: keyof typeof webhookBody, rs: Received[]) =>
  rs.flatMap((r) => webhookBody[owner](JSON.parse(r.body)).map((e) => `${JSON.parse(r.body).type}: ${e}`));

describe('webhooks — every event type, signed', () => {
  it('delivers each type to the workspace and the publisher, each verified with the standardwebhooks package', { timeout: 60_000 }, async () => {
    const buyerHook = await startReceiver();
    const publisherHook = await startReceiver();
    const { ws, p } = await setup([{}, {}, {}, { content_by: 'buyer' }, {}, { content_by: 'buyer' }]);
    const wsEndpoint = await endpoint(ws.readKey, buyerHook.url());
    const pubEndpoint = await endpoint(p.publisherKey, publisherHook.url(), undefined, '/api/v1/publisher');
    expect(wsEndpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

    const placed = (await place(ws.spendKey, { offer_ids: p.offers.map((o) => o.id), target_url: target })).json().data;
    const [main, declined, cancelled, needsContent, expires, unchecked] = placed;
    await pub(p.publisherKey, `${main.id}/accept`);
    await pub(p.publisherKey, `${main.id}/draft`, { title: 'Our product, reviewed', body: articleFor(target) });
    await buyer(ws.readKey, `${main.id}/messages`, { body: 'Nice draft.' });
    await pub(p.publisherKey, `${main.id}/messages`, { body: 'Thanks.' });
    await buyer(ws.readKey, `${main.id}/approve-draft`);
    await pub(p.publisherKey, `${main.id}/publish`, { live_url: `https://${p.domain}/post` });
    await buyer(ws.spendKey, `${main.id}/approve`);
    // The link checker's findings in the guarantee window (the fetch itself is not this test's):
    // the link gone, back, and gone again, then left lost past restore_by.
    expect(await recordLiveCheck(main.id, FAILING_LIVE_CHECKS)).toBe('lost');
    expect(await recordLiveCheck(main.id, PASSING_LIVE_CHECKS)).toBe('restored');
    expect(await recordLiveCheck(main.id, FAILING_LIVE_CHECKS)).toBe('lost');
    await pub(p.publisherKey, `${declined.id}/decline`, { reason: 'No' });
    await buyer(ws.readKey, `${cancelled.id}/cancel`);
    await buyer(ws.readKey, `${needsContent.id}/content`, { title: 'Our own article', body: articleFor(target) });
    // Published, its link not found by the check: its review deadline sends it back to the publisher.
    await buyer(ws.readKey, `${unchecked.id}/content`, { title: 'Our other article', body: articleFor(target) });
    await pub(p.publisherKey, `${unchecked.id}/accept`);
    await pub(p.publisherKey, `${unchecked.id}/publish`, { live_url: `https://${p.domain}/unchecked` });
    await recordLiveCheck(unchecked.id, FAILING_LIVE_CHECKS);
    await topUpWorkspace(h.database.pool, ws.workspaceId, 1_000, h.clock.now());
    // Adding funds (docs/billing.md): a top-up request confirmed by staff, and a staff adjustment.
    const staff = await createUser(h.database.pool, { email: `staff-${Date.now()}@example.com`, name: 'Staff', password: 'correct horse battery', staff: true });
    const billing = createBilling(h.database.pool, h.clock, h.config, webhookSecretBox(h.database.pool, h.config.SECRETS_KEY));
    const requested = await call('POST', ws.spendKey, '/api/v1/top-ups', { amount_usd: 20 });
    expect(requested.statusCode, requested.body).toBe(201);
    const topUp = requested.json().data as { id: number };
    await confirmTopUp(billing, { userId: staff.id }, topUp.id, 2_000);
    valueOf(await adjustBalance(billing, { userId: staff.id }, ws.workspaceId, 500, 'Goodwill credit'));
    // Payouts (docs/billing.md): one sent, one failed.
    const payee = await createUser(h.database.pool, { email: `payee-${Date.now()}@example.com`, name: 'Payee', password: 'correct horse battery' });
    await addMember(h.database.pool, { publisherId: p.publisherId }, payee.id, 'owner');
    const payeeActor = { publisherId: p.publisherId, userId: payee.id };
    await setDestination(billing, payeeActor, { method: 'paypal', email: 'payee@example.com' });
    await makePayable(h.database.pool, p.publisherId, 10_000);
    await markPayoutSent(billing, { userId: staff.id }, valueOf(await requestPayout(billing, payeeActor)).id, 'BANK-1');
    await makePayable(h.database.pool, p.publisherId, 10_000);
    await markPayoutFailed(billing, { userId: staff.id }, valueOf(await requestPayout(billing, payeeActor)).id, 'Account closed');
    // A budgeted key whose one order uses up its day.
    const budgeted = await createKey(h.database.pool, { workspaceId: ws.workspaceId, canPlaceOrders: true, limits: { dailyLimitCents: p.offers[0]!.price } });
    expect((await place(budgeted.key, { offer_ids: [p.offers[0]!.id], target_url: target })).statusCode).toBe(201);
    // Approval requests (docs/approvals.md): approved, declined, cancelled, failed, and one left to expire.
    const asking = await createKey(h.database.pool, { workspaceId: ws.workspaceId, canPlaceOrders: true, needsApproval: true });
    const revokedLater = await createKey(h.database.pool, { workspaceId: ws.workspaceId, canPlaceOrders: true, needsApproval: true });
    const ask = async (key: string, anchor: string) => {
      const res = await place(key, { offer_ids: [p.offers[0]!.id], target_url: target, anchor_text: anchor });
      expect(res.statusCode, res.body).toBe(202);
      return res.json().data.id as number;
    };
    const owner = await createUser(h.database.pool, { email: `owner-${Date.now()}@example.com`, name: 'Owner', password: 'correct horse battery' });
    await addMember(h.database.pool, { workspaceId: ws.workspaceId }, owner.id, 'owner');
    const person = { workspaceId: ws.workspaceId, userId: owner.id };
    const approvals = { pool: h.database.pool, clock: h.clock, durations: durationsFrom(h.config), baseUrl: 'http://127.0.0.1:3000' };
    await approvalRequests.approve(approvals, person, await ask(asking.key, 'approved'));
    await approvalRequests.decline(approvals, person, await ask(asking.key, 'declined'), 'No');
    await call('POST', ws.readKey, `/api/v1/approval-requests/${await ask(asking.key, 'cancelled')}/cancel`);
    const failing = await ask(revokedLater.key, 'failed');
    await revokeKey(h.database.pool, revokedLater.id);
    await approvalRequests.approve(approvals, person, failing);
    await ask(asking.key, 'expires');
    h.clock.advance(4 * DAY);
    await sweep();
    await expireApprovals(h.database.pool, h.clock.now(), approvals.baseUrl);
    h.clock.advance(Math.max(h.config.ORDER_LIVE_REVIEW_DAYS, h.config.LINK_RESTORE_DAYS) * DAY - 4 * DAY + 1_000);
    // The check due at restore_by finds the link still gone (the sweep waits for it).
    expect(await recordLiveCheck(main.id, FAILING_LIVE_CHECKS)).toBe('checked');
    expect(await sweep()).toMatchObject({ returned: 1, link_refunded: 1 });

    const workspaceTypes = eventTypes.filter((t) => t !== 'webhook_endpoint.disabled' && !t.startsWith('payout.'));
    const publisherTypes = eventTypes.filter(
      (t) => t !== 'webhook_endpoint.disabled' && t !== 'workspace.topped_up' && !t.startsWith('balance.') && t !== 'key.budget_exhausted' && !t.startsWith('approval_request.'),
    );
    await vi.waitFor(() => expect(new Set(typesOf(buyerHook.received))).toEqual(new Set(workspaceTypes)), HANG);
    await vi.waitFor(() => expect(new Set(typesOf(publisherHook.received))).toEqual(new Set(publisherTypes)), HANG);
    for (const r of buyerHook.received) {
      const payload = verify(wsEndpoint.secret, r);
      expect(Object.keys(payload).sort()).toEqual(['actor', 'created_at', 'data', 'id', 'previous_status', 'timestamp', 'type']);
      expect(r.headers['webhook-id']).toBe((payload as unknown as { id: string }).id);
      expect(() => verify(pubEndpoint.secret, r)).toThrow();
    }
    for (const r of publisherHook.received) verify(pubEndpoint.secret, r);
    // Every body is what the OpenAPI document says a receiver gets.
    expect(documentErrors('workspace', buyerHook.received)).toEqual([]);
    expect(documentErrors('publisher', publisherHook.received)).toEqual([]);
    // The same events, in the same views, as the feed.
    const feed = (await call('GET', ws.readKey, '/api/v1/events?after=evt_0000000000000000')).json().data;
    // Counted as events (webhook-ids), not requests: delivery is at least once.
    await vi.waitFor(() => expect(new Set(buyerHook.received.map((r) => r.headers['webhook-id'])).size).toBe(feed.length), HANG);
    for (const e of feed) expect(JSON.parse(buyerHook.of(e.id)[0]!.body).data).toEqual(e.data);
    expect(JSON.parse(buyerHook.received.find((r) => JSON.parse(r.body).type === 'order.expired')!.body)).toMatchObject({ previous_status: 'awaiting_acceptance', actor: 'system', data: { id: expires.id } });
  });

  it('sends only the types an endpoint asked for', async () => {
    const hook = await startReceiver();
    const { ws, p } = await setup();
    await endpoint(ws.readKey, hook.url(), ['order.accepted']);
    const order = (await place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: target })).json().data[0];
    await pub(p.publisherKey, `${order.id}/messages`, { body: 'Hello' });
    await pub(p.publisherKey, `${order.id}/accept`);
    await vi.waitFor(() => expect(typesOf(hook.received)).toEqual(['order.accepted']), HANG);
    const feed = (await call('GET', ws.readKey, `/api/v1/events?order_id=${order.id}`)).json().data;
    expect(feed.map((e: { type: string }) => e.type)).toEqual(['order.accepted', 'order.message_received', 'order.placed']);
  });
});

describe('webhooks — retries, timeouts, rotation, resend', () => {
  it('500, 500, 500, 200: four attempts with the same webhook-id, then delivered', async () => {
    const hook = await startReceiver((_, n) => (n <= 3 ? 500 : 200));
    const { ws, p } = await setup();
    const ep = await endpoint(ws.readKey, hook.url(), ['order.accepted']);
    const order = (await place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: target })).json().data[0];
    await pub(p.publisherKey, `${order.id}/accept`);
    const log = async () => (await call('GET', ws.readKey, `/api/v1/webhook-endpoints/${ep.id}/deliveries`)).json();
    await vi.waitFor(async () => expect((await log()).data[0]).toMatchObject({ status: 'delivered', attempts: 4 }), HANG);
    expect(hook.received).toHaveLength(4);
    expect(new Set(hook.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
    for (const r of hook.received) verify(ep.secret, r);
    const [delivery] = (await log()).data;
    webhookDelivery.parse(delivery);
    expect(delivery).toMatchObject({ event_type: 'order.accepted', response_status_code: 200, error: null, next_attempt_at: null, event_id: hook.received[0]!.headers['webhook-id'] });
  });

  it('after a rotation both secrets verify, for a day; the answer shows the new secret once', async () => {
    const hook = await startReceiver();
    const { ws, p } = await setup();
    const ep = await endpoint(ws.readKey, hook.url(), ['order.accepted', 'order.message_received']);
    const rotated = await call('POST', ws.readKey, `/api/v1/webhook-endpoints/${ep.id}/rotate-secret`);
    expect(rotated.statusCode).toBe(200);
    const fresh = webhookEndpointWithSecret.parse(rotated.json().data).secret;
    expect(fresh).not.toBe(ep.secret);
    const order = (await place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: target })).json().data[0];
    await pub(p.publisherKey, `${order.id}/accept`);
    await vi.waitFor(() => expect(hook.received).toHaveLength(1), HANG);
    expect(String(hook.received[0]!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    verify(ep.secret, hook.received[0]!);
    verify(fresh, hook.received[0]!);
    h.clock.advance(DAY + 1);
    await pub(p.publisherKey, `${order.id}/messages`, { body: 'A day later' });
    await vi.waitFor(() => expect(hook.received).toHaveLength(2), HANG);
    expect(String(hook.received[1]!.headers['webhook-signature']).split(' ')).toHaveLength(1);
    verify(fresh, hook.received[1]!);
    expect(() => verify(ep.secret, hook.received[1]!)).toThrow();
    expect((await call('GET', ws.readKey, '/api/v1/webhook-endpoints')).json().data[0]).not.toHaveProperty('secret');
  });

  it('resend sends the same event again as a new delivery', async () => {
    const hook = await startReceiver();
    const { ws, p } = await setup();
    const ep = await endpoint(ws.readKey, hook.url(), ['order.accepted']);
    const order = (await place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: target })).json().data[0];
    await pub(p.publisherKey, `${order.id}/accept`);
    await vi.waitFor(() => expect(hook.received).toHaveLength(1), HANG);
    const [first] = (await call('GET', ws.readKey, `/api/v1/webhook-endpoints/${ep.id}/deliveries`)).json().data;
    const again = await call('POST', ws.readKey, `/api/v1/webhook-endpoints/${ep.id}/deliveries/${first.id}/resend`);
    expect(again.statusCode).toBe(202);
    expect(again.json().data).toMatchObject({ status: 'pending', attempts: 0, event_id: first.event_id });
    await vi.waitFor(() => expect(hook.received).toHaveLength(2), HANG);
    expect(hook.received[1]!.headers['webhook-id']).toBe(hook.received[0]!.headers['webhook-id']);
    expect((await call('POST', ws.readKey, `/api/v1/webhook-endpoints/${ep.id}/deliveries/999999999/resend`)).statusCode).toBe(404);
  });

  it('an endpoint failing past WEBHOOK_DISABLE_AFTER_HOURS is disabled, and its owner told', async () => {
    const failing = await startReceiver(() => 503);
    const healthy = await startReceiver();
    const { ws, p } = await setup();
    const bad = await endpoint(ws.readKey, failing.url(), ['order.accepted']);
    const good = await endpoint(ws.readKey, healthy.url(), ['webhook_endpoint.disabled']);
    const order = (await place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: target })).json().data[0];
    await pub(p.publisherKey, `${order.id}/accept`);
    await vi.waitFor(() => expect(failing.received.length).toBeGreaterThanOrEqual(1), HANG);
    h.clock.advance(73 * 3_600_000);
    await vi.waitFor(() => expect(healthy.received).toHaveLength(1), HANG);
    const told = verify(good.secret, healthy.received[0]!);
    expect(documentErrors('workspace', healthy.received)).toEqual([]);
    expect(told).toMatchObject({ type: 'webhook_endpoint.disabled', data: { id: bad.id, url: bad.url, disabled_at: expect.any(String) } });
    const list = (await call('GET', ws.readKey, '/api/v1/webhook-endpoints')).json().data;
    expect(list.find((e: { id: number }) => e.id === bad.id).disabled_at).not.toBeNull();
    const [d] = (await call('GET', ws.readKey, `/api/v1/webhook-endpoints/${bad.id}/deliveries`)).json().data;
    expect(d).toMatchObject({ status: 'failed', response_status_code: 503, next_attempt_at: null });
    expect((await call('POST', ws.readKey, `/api/v1/webhook-endpoints/${bad.id}/deliveries/${d.id}/resend`)).statusCode).toBe(409);
  });
});

describe('webhooks — a receiver that never answers', async () => {
  const impatient = await setupApp({ ...fast, WEBHOOK_TIMEOUT_MS: 300 }, { clock: new LiveClock() });
  const impatientKit = orderKit(impatient);
  const impatientCall = (method: 'POST' | 'GET' | 'DELETE', key: string, url: string, payload?: object) =>
    impatient.app.inject({ method, url, headers: bearer(key), ...(payload ? { payload } : {}) });

  it('a receiver that never answers is timed out and tried again', async () => {
    const hook = await startReceiver(() => 'hang');
    const { ws, p } = await impatientKit.setup();
    const ep = webhookEndpointWithSecret.parse((await impatientCall('POST', ws.readKey, '/api/v1/webhook-endpoints', { url: hook.url(), events: ['order.accepted'] })).json().data);
    const order = (await impatientKit.place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: target })).json().data[0];
    await impatientKit.pub(p.publisherKey, `${order.id}/accept`);
    await vi.waitFor(async () => {
      const [d] = (await impatientCall('GET', ws.readKey, `/api/v1/webhook-endpoints/${ep.id}/deliveries`)).json().data;
      expect(d).toMatchObject({ status: 'pending', error: 'no reply within 300 ms', response_status_code: null });
      expect(d.attempts).toBeGreaterThanOrEqual(2);
    }, HANG);
    expect(new Set(hook.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
    await impatientCall('DELETE', ws.readKey, `/api/v1/webhook-endpoints/${ep.id}`);
  });
});

describe('webhook endpoints — errors and security', () => {
  it('names the bad field', async () => {
    const { ws } = await setup();
    for (const [body, field] of [
      [{ url: 'http://example.com/hook' }, 'url'],
      [{ url: 'not a url' }, 'url'],
      [{ url: 'https://user:pw@example.com/hook' }, 'url'],
      [{ url: 'https://10.0.0.1/hook' }, 'url'],
      [{ url: 'https://169.254.169.254/latest' }, 'url'],
      [{ url: 'https://93.184.216.34/hook', events: ['order.unknown'] }, 'events.0'],
      [{ url: 'https://93.184.216.34/hook', events: [] }, 'events'],
      [{ url: 'https://93.184.216.34/hook', secret: 'x' }, 'secret'],
      [{}, 'url'],
    ] as const) {
      const res = await call('POST', ws.readKey, '/api/v1/webhook-endpoints', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
      expect(Object.keys(res.json().errors), JSON.stringify(body)).toEqual([field]);
    }
  });

  it("refuses a publisher's endpoint or feed filter naming an event only a workspace receives", async () => {
    const { p } = await setup();
    for (const events of [['workspace.topped_up'], ['order.placed', 'key.budget_exhausted']]) {
      const res = await call('POST', p.publisherKey, '/api/v1/publisher/webhook-endpoints', { url: 'https://93.184.216.34/hook', events });
      expect(res.statusCode, JSON.stringify(events)).toBe(422);
      expect(Object.keys(res.json().errors)).toEqual(['events']);
    }
    const feed = await h.app.inject({ method: 'GET', url: '/api/v1/publisher/events?type=workspace.topped_up', headers: bearer(p.publisherKey) });
    expect(feed.statusCode).toBe(422);
    expect(Object.keys(feed.json().errors)).toEqual(['type']);
    expect((await h.database.pool.query('SELECT count(*)::int AS n FROM webhook_endpoints WHERE publisher_id = $1', [p.publisherId])).rows[0].n).toBe(0);
    // A publisher's own event types still go.
    expect((await call('POST', p.publisherKey, '/api/v1/publisher/webhook-endpoints', { url: 'https://93.184.216.34/hook', events: ['order.placed'] })).statusCode).toBe(201);
  });

  it('keeps each owner to its own endpoints, and each route to its kind of key', async () => {
    const hook = await startReceiver();
    const one = await setup();
    const other = await setup();
    const ep = await endpoint(one.ws.readKey, hook.url());
    for (const [method, path] of [['DELETE', ''], ['POST', '/rotate-secret'], ['GET', '/deliveries']] as const) {
      expect((await call(method, other.ws.readKey, `/api/v1/webhook-endpoints/${ep.id}${path}`)).statusCode).toBe(404);
      expect((await call(method, one.p.publisherKey, `/api/v1/publisher/webhook-endpoints/${ep.id}${path}`)).statusCode).toBe(404);
    }
    expect((await call('GET', other.ws.readKey, '/api/v1/webhook-endpoints')).json().data).toEqual([]);
    expect((await call('GET', one.p.publisherKey, '/api/v1/webhook-endpoints')).statusCode).toBe(403);
    expect((await call('GET', one.ws.readKey, '/api/v1/publisher/webhook-endpoints')).statusCode).toBe(403);
    expect((await call('DELETE', one.ws.readKey, `/api/v1/webhook-endpoints/${ep.id}`)).statusCode).toBe(204);
    expect((await call('DELETE', one.ws.readKey, `/api/v1/webhook-endpoints/${ep.id}`)).statusCode).toBe(404);
  });

  it('a creation retried with its Idempotency-Key answers the same endpoint and secret', async () => {
    const { ws } = await setup();
    const send = () =>
      h.app.inject({ method: 'POST', url: '/api/v1/webhook-endpoints', headers: { ...bearer(ws.readKey), 'idempotency-key': 'hook-once' }, payload: { url: 'https://93.184.216.34/hook' } });
    const first = await send();
    const again = await send();
    expect(first.statusCode).toBe(201);
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect((await call('GET', ws.readKey, '/api/v1/webhook-endpoints')).json().data).toHaveLength(1);
  });

  it('at most 20 endpoints per workspace', async () => {
    const { ws } = await setup();
    for (let i = 0; i < 20; i++) await endpoint(ws.readKey, `https://93.184.216.34/hook/${i}`);
    const res = await call('POST', ws.readKey, '/api/v1/webhook-endpoints', { url: 'https://93.184.216.34/hook/21' });
    expect(res.statusCode).toBe(409);
  });
});
