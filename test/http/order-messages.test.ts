import { describe, expect, it } from 'vitest';
import { messageSchema } from '../../src/schemas/orders.js';
import { setupApp } from '../helpers/app.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';
import { orderKit } from '../helpers/orders.js';

// GET …/orders/{id}/messages beside the POST that sends one: both sides read the whole
// conversation, a page at a time, oldest first (GET /orders/{id} carries only the last 100).

const h = await setupApp();
const { place, buyer, pub, setup } = orderKit(h);
const get = (key: string | undefined, url: string) => h.app.inject({ method: 'GET', url, headers: key ? bearer(key) : {} });

const { ws, p } = await setup([{ content_by: 'publisher' }]);
const placed = await place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: 'https://buyer.example/' });
const orderId: number = placed.json().data[0].id;
for (let i = 1; i <= 3; i++) {
  await buyer(ws.readKey, `${orderId}/messages`, { body: `buyer ${i}` });
  await pub(p.publisherKey, `${orderId}/messages`, { body: `publisher ${i}` });
}
const buyerUrl = `/api/v1/orders/${orderId}/messages`;
const publisherUrl = `/api/v1/publisher/orders/${orderId}/messages`;

describe('GET /api/v1/orders/{id}/messages and /api/v1/publisher/orders/{id}/messages — happy', () => {
  it('lists both sides’ messages oldest first, paginated, the same for buyer and publisher', async () => {
    const all = await get(ws.readKey, buyerUrl);
    expect(all.statusCode, all.body).toBe(200);
    const body = all.json();
    expect(body.data.map((m: { body: string; author: string }) => `${m.author}:${m.body}`)).toEqual([
      'buyer:buyer 1',
      'publisher:publisher 1',
      'buyer:buyer 2',
      'publisher:publisher 2',
      'buyer:buyer 3',
      'publisher:publisher 3',
    ]);
    for (const m of body.data) messageSchema.parse(m);
    expect(body.meta).toMatchObject({ total: 6, current_page: 1, per_page: 15, from: 1, to: 6, last_page: 1 });

    const page2 = (await get(ws.readKey, `${buyerUrl}?per_page=4&page=2`)).json();
    expect(page2.data.map((m: { body: string }) => m.body)).toEqual(['buyer 3', 'publisher 3']);
    expect(page2.meta).toMatchObject({ total: 6, current_page: 2, last_page: 2, from: 5, to: 6 });
    expect(page2.links.prev).toContain('page=1');

    const theirs = await get(p.publisherKey, publisherUrl);
    expect(theirs.statusCode, theirs.body).toBe(200);
    expect(theirs.json().data).toEqual(body.data);
  });

  it('is an empty page for an order without messages', async () => {
    const other = await place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: 'https://buyer.example/two' });
    const res = await get(ws.readKey, `/api/v1/orders/${other.json().data[0].id}/messages`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ data: [], meta: { total: 0, from: null, to: null } });
  });
});

describe('GET /api/v1/orders/{id}/messages and /api/v1/publisher/orders/{id}/messages — errors', () => {
  it('answers 422 naming the parameter for a bad id, page or per_page, or an unknown parameter', async () => {
    for (const [url, field] of [
      ['/api/v1/orders/abc/messages', 'id'],
      ['/api/v1/orders/0/messages', 'id'],
      [`${buyerUrl}?page=0`, 'page'],
      [`${buyerUrl}?per_page=101`, 'per_page'],
      [`${buyerUrl}?sort=newest`, 'sort'],
      [`${publisherUrl}?per_page=x`, 'per_page'],
    ] as const) {
      const key = url.includes('/publisher/') ? p.publisherKey : ws.readKey;
      const res = await get(key, url);
      expect(res.statusCode, url).toBe(422);
      expect(res.json(), url).toMatchObject({ code: 'invalid_input', request_id: expect.any(String) });
      expect(JSON.stringify(res.json().errors), url).toContain(field);
    }
  });

  it('answers 404 for an order that does not exist', async () => {
    for (const [key, url] of [
      [ws.readKey, '/api/v1/orders/2147483647/messages'],
      [p.publisherKey, '/api/v1/publisher/orders/2147483647/messages'],
    ] as const) {
      const res = await get(key, url);
      expect(res.statusCode, url).toBe(404);
      expect(res.json()).toMatchObject({ code: 'not_found' });
    }
  });
});

describe('GET /api/v1/orders/{id}/messages and /api/v1/publisher/orders/{id}/messages — security', () => {
  it('needs a key: 401 without one or with an unknown one', async () => {
    for (const url of [buyerUrl, publisherUrl]) {
      expect((await get(undefined, url)).statusCode, url).toBe(401);
      expect((await get('mk_' + 'x'.repeat(32), url)).statusCode, url).toBe(401);
    }
  });

  it('another workspace or another publisher gets 404, as if the order did not exist', async () => {
    const stranger = await workspaceWithKeys(h.database.pool);
    const res = await get(stranger.readKey, buyerUrl);
    expect(res.statusCode).toBe(404);
    expect(res.body).not.toContain('buyer 1');
    const otherPub = await publisherWithOutlet(h.database, [{}]);
    const theirs = await get(otherPub.publisherKey, publisherUrl);
    expect(theirs.statusCode).toBe(404);
  });

  it('a publisher key is refused on the buyer route and a workspace key on the publisher route (403)', async () => {
    expect((await get(p.publisherKey, buyerUrl)).statusCode).toBe(403);
    expect((await get(ws.readKey, publisherUrl)).statusCode).toBe(403);
  });
});
