import { describe, expect, it } from 'vitest';
import { withTransaction } from '../../../src/db/handle.js';
import { purgeOldEvents } from '../../../src/domain/events/feed.js';
import { sequenceEvents } from '../../../src/domain/events/sequencer.js';
import { publisherActions } from '../../../src/domain/orders/publisher-actions.js';
import { durationsFrom } from '../../../src/domain/orders/states.js';
import { topUpWorkspace } from '../../../src/domain/workspaces/top-up.js';
import { setApprovalRules } from '../../../src/domain/workspaces/workspace-service.js';
import { buyerOrder, publisherOrder } from '../../../src/schemas/orders.js';
import { publisherEvent, workspaceEvent } from '../../../src/schemas/events.js';
import { setupApp } from '../../helpers/app.js';
import { bearer } from '../../helpers/fixtures.js';
import { articleFor, DAY, orderKit } from '../../helpers/orders.js';

const h = await setupApp();
const { place, buyer, pub, sweep, setup } = orderKit(h);
const get = (key: string, url: string) => h.app.inject({ method: 'GET', url, headers: bearer(key) });
const sequence = () => sequenceEvents(h.database.pool, h.clock.now());
const types = (body: { data: Array<{ type: string }> }) => body.data.map((e) => e.type);
const target = 'https://buyer.example/product';

describe('GET /api/v1/events and /api/v1/publisher/events — happy', () => {
  it('records every step of an order once per party, each in its own view, newest first', async () => {
    const { ws, p } = await setup();
    const order = (await place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: target, anchor_text: 'our product' })).json().data[0];
    await pub(p.publisherKey, `${order.id}/accept`);
    await pub(p.publisherKey, `${order.id}/draft`, { title: 'Our product, reviewed', body: articleFor(target) });
    await buyer(ws.readKey, `${order.id}/messages`, { body: 'Looks good.' });
    await pub(p.publisherKey, `${order.id}/messages`, { body: 'Thanks!' });
    await buyer(ws.readKey, `${order.id}/approve-draft`);
    await pub(p.publisherKey, `${order.id}/publish`, { live_url: `https://${p.domain}/post` });
    await buyer(ws.spendKey, `${order.id}/approve`);
    await sequence();

    const mine = (await get(ws.readKey, '/api/v1/events')).json();
    expect(types(mine)).toEqual(['order.completed', 'order.published', 'order.draft_approved', 'order.message_received', 'order.draft_submitted', 'order.accepted', 'order.placed']);
    for (const e of mine.data) workspaceEvent.parse(e);
    expect(mine.meta).toMatchObject({ total: 7, current_page: 1 });
    const [completed, published, , received] = mine.data;
    expect(completed).toMatchObject({ actor: 'buyer', previous_status: 'live_review', data: { id: order.id, status: 'completed', price: order.price } });
    expect(published).toMatchObject({ actor: 'publisher', previous_status: 'publishing', data: { status: 'live_review' } });
    expect(received).toMatchObject({ actor: 'publisher', previous_status: null, data: { body: 'Thanks!', author: 'publisher', order_id: order.id } });
    // The last event's data is the order exactly as GET /orders/{id} shows it.
    expect(completed.data).toEqual((await get(ws.readKey, `/api/v1/orders/${order.id}`)).json().data);
    buyerOrder.parse(completed.data);
    expect(mine.data.map((e: { id: string }) => e.id)).toEqual([...mine.data.map((e: { id: string }) => e.id)].sort().reverse());

    const theirs = (await get(p.publisherKey, '/api/v1/publisher/events')).json();
    expect(types(theirs)).toEqual(['order.completed', 'order.published', 'order.draft_approved', 'order.message_received', 'order.draft_submitted', 'order.accepted', 'order.placed']);
    for (const e of theirs.data) publisherEvent.parse(e);
    expect(theirs.data[0].data).toEqual((await get(p.publisherKey, `/api/v1/publisher/orders/${order.id}`)).json().data);
    publisherOrder.parse(theirs.data[0].data);
    expect(theirs.data[0].data).not.toHaveProperty('price');
    expect(theirs.data[3].data).toMatchObject({ body: 'Looks good.', author: 'buyer' });
  });

  it('follows with after: oldest first, limit and has_more, then nothing new', async () => {
    const { ws, p } = await setup();
    const order = (await place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: target })).json().data[0];
    await pub(p.publisherKey, `${order.id}/accept`);
    for (let i = 0; i < 3; i++) await pub(p.publisherKey, `${order.id}/messages`, { body: `note ${i}` });
    await sequence();
    const first = (await get(ws.readKey, '/api/v1/events?after=evt_0000000000000000&limit=3')).json();
    expect(first).toEqual({
      data: [
        expect.objectContaining({ type: 'order.placed' }),
        expect.objectContaining({ type: 'order.accepted' }),
        expect.objectContaining({ type: 'order.message_received' }),
      ],
      has_more: true,
    });
    expect(first).not.toHaveProperty('links');
    const rest = (await get(ws.readKey, `/api/v1/events?after=${first.data[2].id}`)).json();
    expect(rest.data.map((e: { data: { body: string } }) => e.data.body)).toEqual(['note 1', 'note 2']);
    expect(rest.has_more).toBe(false);
    expect((await get(ws.readKey, `/api/v1/events?after=${rest.data[1].id}`)).json()).toEqual({ data: [], has_more: false });
  });

  it('filters by type and order_id, in both modes', async () => {
    const { ws, p } = await setup([{}, {}]);
    const [a, b] = (await place(ws.spendKey, { offer_ids: p.offers.map((o) => o.id), target_url: target })).json().data;
    await pub(p.publisherKey, `${a.id}/accept`);
    await pub(p.publisherKey, `${b.id}/decline`, { reason: 'Not our topic' });
    await sequence();
    const declined = (await get(ws.readKey, '/api/v1/events?type=order.declined')).json();
    expect(declined.data).toHaveLength(1);
    expect(declined.data[0]).toMatchObject({ data: { id: b.id, status: 'declined', decline_reason: 'Not our topic' } });
    const ofA = (await get(p.publisherKey, `/api/v1/publisher/events?order_id=${a.id}&after=evt_0000000000000000`)).json();
    expect(ofA.data.map((e: { type: string; data: { id: number } }) => [e.type, e.data.id])).toEqual([
      ['order.placed', a.id],
      ['order.accepted', a.id],
    ]);
    // Page links keep the filters.
    expect(declined.links.first).toContain('type=order.declined');
  });

  it('records expiries and automatic approvals by the sweep, with the state left', async () => {
    const { ws, p } = await setup([{}, {}]);
    const [a, b] = (await place(ws.spendKey, { offer_ids: p.offers.map((o) => o.id), target_url: target })).json().data;
    await pub(p.publisherKey, `${b.id}/accept`);
    await pub(p.publisherKey, `${b.id}/draft`, { title: 'A draft for review', body: articleFor(target) });
    h.clock.advance(7 * DAY + 1);
    await sweep();
    await sequence();
    const ofA = (await get(ws.readKey, `/api/v1/events?order_id=${a.id}`)).json().data;
    expect(ofA).toEqual([
      expect.objectContaining({ type: 'order.expired', actor: 'system', previous_status: 'awaiting_acceptance' }),
      expect.objectContaining({ type: 'order.placed' }),
    ]);
    const approved = (await get(ws.readKey, `/api/v1/events?order_id=${b.id}&type=order.draft_approved`)).json().data;
    expect(approved).toEqual([expect.objectContaining({ actor: 'system', previous_status: 'draft_review', data: expect.objectContaining({ status: 'publishing' }) })]);
  });

  it('a workspace that auto-approves drafts gets draft_submitted then draft_approved by the system', async () => {
    const { ws, p } = await setup();
    await setApprovalRules(h.database.pool, ws.workspaceId, { autoApproveDrafts: true });
    const order = (await place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: target })).json().data[0];
    await pub(p.publisherKey, `${order.id}/accept`);
    await pub(p.publisherKey, `${order.id}/draft`, { title: 'A draft for review', body: articleFor(target) });
    await sequence();
    const events = (await get(ws.readKey, `/api/v1/events?after=evt_0000000000000000&order_id=${order.id}`)).json().data;
    expect(events.map((e: { type: string; actor: string; previous_status: string }) => `${e.type}/${e.actor}/${e.previous_status}`)).toEqual([
      'order.placed/buyer/null',
      'order.accepted/publisher/awaiting_acceptance',
      'order.draft_submitted/publisher/writing',
      'order.draft_approved/system/writing',
    ]);
  });

  it('a top-up is workspace.topped_up, to the workspace only', async () => {
    const { ws } = await setup();
    const view = await topUpWorkspace(h.database.pool, ws.workspaceId, 2_500, h.clock.now());
    await sequence();
    const events = (await get(ws.readKey, '/api/v1/events?type=workspace.topped_up')).json().data;
    expect(events).toEqual([expect.objectContaining({ actor: 'system', data: { workspace_id: ws.workspaceId, amount: 2_500, amount_formatted: '$25.00', balance: view.balance, balance_formatted: view.balance_formatted } })]);
  });

  it('order.placed: written in the placement’s transaction, both views as GET shows the order', async () => {
    const { ws, p } = await setup();
    const order = (await place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: target })).json().data[0];
    await sequence();
    const mine = (await get(ws.readKey, '/api/v1/events?type=order.placed')).json().data;
    expect(mine).toEqual([expect.objectContaining({ actor: 'buyer', previous_status: null, data: (await get(ws.readKey, `/api/v1/orders/${order.id}`)).json().data })]);
    const theirs = (await get(p.publisherKey, '/api/v1/publisher/events?type=order.placed')).json().data;
    expect(theirs[0].data).toEqual((await get(p.publisherKey, `/api/v1/publisher/orders/${order.id}`)).json().data);
  });

  it('keeps events 30 days: older ones are purged', async () => {
    const { ws, p } = await setup();
    const order = (await place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: target })).json().data[0];
    await pub(p.publisherKey, `${order.id}/accept`);
    await sequence();
    await purgeOldEvents(h.database.pool, h.clock.now() + 29 * DAY, 30);
    expect((await get(ws.readKey, `/api/v1/events?order_id=${order.id}`)).json().data).toHaveLength(2);
    expect(await purgeOldEvents(h.database.pool, h.clock.now() + 31 * DAY, 30)).toBeGreaterThanOrEqual(4);
    // The order is still the caller's: an empty page, not a 404, for either party and either mode.
    for (const [key, url] of [
      [ws.readKey, `/api/v1/events?order_id=${order.id}`],
      [ws.readKey, `/api/v1/events?order_id=${order.id}&after=evt_0000000000000000`],
      [p.publisherKey, `/api/v1/publisher/events?order_id=${order.id}`],
    ] as const) {
      const res = await get(key, url);
      expect(res.statusCode, url).toBe(200);
      expect(res.json().data, url).toEqual([]);
    }
  });
});

describe('events — never invented', () => {
  it('an event appears only once positioned, after its transaction committed', async () => {
    const { ws, p } = await setup();
    const order = (await place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: target })).json().data[0];
    await pub(p.publisherKey, `${order.id}/accept`);
    expect((await get(ws.readKey, `/api/v1/events?order_id=${order.id}`)).json().data).toEqual([]);
    expect((await sequence()).positioned).toBeGreaterThanOrEqual(4);
    expect((await get(ws.readKey, `/api/v1/events?order_id=${order.id}`)).json().data).toHaveLength(2);
  });

  it('a refused step (409) and a rolled-back transaction record nothing', async () => {
    const { ws, p } = await setup();
    const order = (await place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: target })).json().data[0];
    expect((await buyer(ws.spendKey, `${order.id}/approve`)).statusCode).toBe(409);
    expect((await buyer(ws.readKey, `${order.id}/approve-draft`)).statusCode).toBe(409);
    // The accept itself succeeds inside the transaction, which then fails.
    const actions = publisherActions(durationsFrom(h.config));
    await expect(
      withTransaction(h.database.pool, async (tx) => {
        await actions.accept(tx, p.publisherId, order.id, h.clock.now());
        throw new Error('fails after the change');
      }),
    ).rejects.toThrow('fails after the change');
    await sequence();
    // Only the placement's own events, one per party.
    expect(types((await get(ws.readKey, `/api/v1/events?order_id=${order.id}`)).json())).toEqual(['order.placed']);
    expect(types((await get(p.publisherKey, `/api/v1/publisher/events?order_id=${order.id}`)).json())).toEqual(['order.placed']);
    const { rows } = await h.database.pool.query('SELECT count(*)::int AS n FROM events WHERE order_id = $1', [order.id]);
    expect(rows[0].n).toBe(2);
  });

  it('a placement refused for its balance (402) records nothing', async () => {
    const { ws, p } = await setup();
    const { rows: before } = await h.database.pool.query('SELECT count(*)::int AS n FROM events');
    const { rows: balance } = await h.database.pool.query(
      `SELECT balance::int AS cents FROM ledger_accounts WHERE workspace_id = $1 AND kind = 'available'`,
      [ws.workspaceId],
    );
    await h.database.pool.query(`UPDATE offers SET publisher_price_cents = $2 - fee_cents WHERE id = $1`, [p.offers[0]!.id, balance[0].cents + 1]);
    const res = await place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: target });
    expect(res.statusCode).toBe(402);
    await sequence();
    const { rows: after } = await h.database.pool.query('SELECT count(*)::int AS n FROM events');
    expect(after[0].n).toBe(before[0].n);
    expect((await get(ws.readKey, '/api/v1/events')).json().data).toEqual([]);
  });
});

describe('GET /api/v1/events — errors and security', () => {
  it('names the bad parameter', async () => {
    const { ws } = await setup();
    for (const [query, field] of [
      ['after=123', 'after'],
      ['after=evt_1', 'after'],
      ['after=evt_0000000000000000&page=2', 'page'],
      ['limit=5', 'limit'],
      ['after=evt_0000000000000000&limit=0', 'limit'],
      ['type=order.unknown', 'type'],
      ['order_id=abc', 'order_id'],
      ['order_id=9007199254740992', 'order_id'],
      ['order_id=0', 'order_id'],
      ['per_page=101', 'per_page'],
      ['since=1', 'since'],
    ] as const) {
      const res = await get(ws.readKey, `/api/v1/events?${query}`);
      expect(res.statusCode, query).toBe(422);
      expect(Object.keys(res.json().errors), query).toEqual([field]);
    }
    // The largest order_id the parameter takes (2^53 − 1) passes the check; no order has it.
    const largest = await get(ws.readKey, '/api/v1/events?order_id=9007199254740991');
    expect(largest.json()).toMatchObject({ code: 'not_found', message: 'Order 9007199254740991 not found.' });
    expect(largest.statusCode).toBe(404);
  });

  it('shows each owner only its own events, and each route only its kind of key', async () => {
    const one = await setup();
    const other = await setup();
    const order = (await place(one.ws.spendKey, { offer_ids: [one.p.offers[0]!.id], target_url: target })).json().data[0];
    await pub(one.p.publisherKey, `${order.id}/accept`);
    await sequence();
    // Another party's order is a 404 naming it, in both modes, exactly as an id no order has.
    const missing = order.id + 1_000_000;
    for (const [key, path] of [
      [other.ws.readKey, '/api/v1/events'],
      [other.p.publisherKey, '/api/v1/publisher/events'],
    ] as const) {
      for (const id of [order.id, missing]) {
        for (const query of [`order_id=${id}`, `order_id=${id}&after=evt_0000000000000000`, `order_id=${id}&type=order.accepted`]) {
          const res = await get(key, `${path}?${query}`);
          expect(res.statusCode, `${path}?${query}`).toBe(404);
          expect(res.json(), `${path}?${query}`).toMatchObject({ code: 'not_found', message: `Order ${id} not found.` });
        }
      }
    }
    // The order's own parties still read it.
    expect(types((await get(one.ws.readKey, `/api/v1/events?order_id=${order.id}`)).json())).toEqual(['order.accepted', 'order.placed']);
    expect(types((await get(one.p.publisherKey, `/api/v1/publisher/events?order_id=${order.id}`)).json())).toEqual(['order.accepted', 'order.placed']);
    expect((await get(one.p.publisherKey, '/api/v1/events')).statusCode).toBe(403);
    expect((await get(one.ws.readKey, '/api/v1/publisher/events')).statusCode).toBe(403);
    expect((await h.app.inject({ method: 'GET', url: '/api/v1/events' })).statusCode).toBe(401);
  });
});
