import { describe, expect, it } from 'vitest';
import { createBilling } from '../../src/domain/billing/billing-deps.js';
import { markPayoutFailed } from '../../src/domain/billing/payout-decide.js';
import { setDestination } from '../../src/domain/billing/payout-details.js';
import { requestPayout } from '../../src/domain/billing/payouts.js';
import { valueOf } from '../../src/domain/idempotency/record-once.js';
import { setStaff } from '../../src/domain/users/user-service.js';
import { webhookSecretBox } from '../../src/domain/webhooks/secret-box.js';
import { publisherMeData } from '../../src/schemas/me.js';
import { setupApp } from '../helpers/app.js';
import { bearer } from '../helpers/fixtures.js';
import { personIn } from '../helpers/notify.js';
import { makePayable } from '../helpers/payouts.js';
import { orderKit } from '../helpers/orders.js';

const h = await setupApp();
const { accepted, buyer, pub, verifyLiveLink, setup } = orderKit(h);
const me = (key: string) => h.app.inject({ method: 'GET', url: '/api/v1/publisher/me', headers: bearer(key) });

describe('GET /api/v1/publisher/me — happy', () => {
  it('shows the publisher and its balances: an approval grows pending, not payable', async () => {
    const { ws, p } = await setup([{ content_by: 'buyer', publisher_price_cents: 12_345 }]);
    const before = publisherMeData.parse((await me(p.publisherKey)).json().data);
    expect(before).toMatchObject({ pending: 0, pending_formatted: '$0.00', payable: 0, payable_formatted: '$0.00', in_payout: 0, in_payout_formatted: '$0.00' });
    expect(before.publisher.id).toBe(p.publisherId);

    const id = await accepted(ws.spendKey, p.publisherKey, p.offers[0]!.id, 'https://buyer.example/');
    await pub(p.publisherKey, `${id}/publish`, { live_url: `https://${p.domain}/post` });
    await verifyLiveLink(id);
    expect((await buyer(ws.spendKey, `${id}/approve`)).statusCode).toBe(200);
    expect((await me(p.publisherKey)).json().data).toMatchObject({ pending: 12_345, pending_formatted: '$123.45', payable: 0 });
  });
});

describe('GET /api/v1/publisher/me: payouts — happy', () => {
  it('a payout requested moves payable to in_payout; a failed one moves it back', async () => {
    const { p, ws } = await setup();
    const billing = createBilling(h.database.pool, h.clock, h.config, webhookSecretBox(h.database.pool, h.config.SECRETS_KEY));
    const owner = await personIn(h, { publisherId: p.publisherId }, 'owner');
    const staff = await personIn(h, { workspaceId: ws.workspaceId }, 'viewer');
    await setStaff(h.database.pool, staff.id, true);
    await setDestination(billing, { publisherId: p.publisherId, userId: owner.id }, { method: 'paypal', email: 'me@example.com' });
    await makePayable(h.database.pool, p.publisherId, 8_000);
    expect((await me(p.publisherKey)).json().data).toMatchObject({ payable: 8_000, in_payout: 0 });
    const payout = valueOf(await requestPayout(billing, { publisherId: p.publisherId, userId: owner.id }));
    expect(publisherMeData.parse((await me(p.publisherKey)).json().data)).toMatchObject({ payable: 0, in_payout: 8_000, in_payout_formatted: '$80.00' });
    await markPayoutFailed(billing, { userId: staff.id }, payout.id, 'Bounced');
    expect((await me(p.publisherKey)).json().data).toMatchObject({ payable: 8_000, in_payout: 0 });
  });
});

describe('GET /api/v1/publisher/me — security', () => {
  it('is for publisher keys: a workspace key is 403, none is 401', async () => {
    const { ws } = await setup();
    expect((await me(ws.readKey)).statusCode).toBe(403);
    expect((await h.app.inject({ method: 'GET', url: '/api/v1/publisher/me' })).statusCode).toBe(401);
  });
});
