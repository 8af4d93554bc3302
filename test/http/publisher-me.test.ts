import { describe, expect, it } from 'vitest';
import { publisherMeData } from '../../src/schemas/me.js';
import { setupApp } from '../helpers/app.js';
import { bearer } from '../helpers/fixtures.js';
import { orderKit } from '../helpers/orders.js';

const h = await setupApp();
const { accepted, buyer, pub, verifyLiveLink, setup } = orderKit(h);
const me = (key: string) => h.app.inject({ method: 'GET', url: '/api/v1/publisher/me', headers: bearer(key) });

describe('GET /api/v1/publisher/me — happy', () => {
  it('shows the publisher and its balances: an approval grows pending, not payable', async () => {
    const { ws, p } = await setup([{ content_by: 'buyer', publisher_price_cents: 12_345 }]);
    const before = publisherMeData.parse((await me(p.publisherKey)).json().data);
    expect(before).toMatchObject({ pending: 0, pending_formatted: '$0.00', payable: 0, payable_formatted: '$0.00' });
    expect(before.publisher.id).toBe(p.publisherId);

    const id = await accepted(ws.spendKey, p.publisherKey, p.offers[0]!.id, 'https://buyer.example/');
    await pub(p.publisherKey, `${id}/publish`, { live_url: `https://${p.domain}/post` });
    await verifyLiveLink(id);
    expect((await buyer(ws.spendKey, `${id}/approve`)).statusCode).toBe(200);
    expect((await me(p.publisherKey)).json().data).toMatchObject({ pending: 12_345, pending_formatted: '$123.45', payable: 0 });
  });
});

describe('GET /api/v1/publisher/me — security', () => {
  it('is for publisher keys: a workspace key is 403, none is 401', async () => {
    const { ws } = await setup();
    expect((await me(ws.readKey)).statusCode).toBe(403);
    expect((await h.app.inject({ method: 'GET', url: '/api/v1/publisher/me' })).statusCode).toBe(401);
  });
});
