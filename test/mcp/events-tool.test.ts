import { describe, expect, it } from 'vitest';
import { sequenceEvents } from '../../src/domain/events/sequencer.js';
import { workspaceEvent } from '../../src/schemas/events.js';
import { INSTRUCTIONS } from '../../src/mcp/server.js';
import { setupApp } from '../helpers/app.js';
import { orderKit } from '../helpers/orders.js';
import { connect, fails, listen, ok } from './helpers.js';

// list-events (docs/events.md) through the SDK's real client.

const h = await setupApp();
const url = await listen(h);
const { place, pub, setup } = orderKit(h);

type Page = { events: Array<{ id: string; type: string; data: { id?: number; body?: string } }>; has_more: boolean; next_after: string };

describe('MCP list-events — happy', () => {
  it('answers what changed since the last call, once each, in the buyer’s view', async () => {
    const { ws, p } = await setup();
    const client = await connect(url, ws.readKey);
    const order = (await place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: 'https://buyer.example/' })).json().data[0];
    const empty = await ok<Page>(client, 'list-events');
    expect(empty).toEqual({ events: [], has_more: false, next_after: 'evt_0000000000000000' });

    await pub(p.publisherKey, `${order.id}/accept`);
    await pub(p.publisherKey, `${order.id}/messages`, { body: 'Starting today.' });
    await sequenceEvents(h.database.pool, h.clock.now());
    const first = await ok<Page>(client, 'list-events', { after: empty.next_after, limit: 2 });
    expect(first.events.map((e) => e.type)).toEqual(['order.placed', 'order.accepted']);
    expect(first.has_more).toBe(true);
    for (const e of first.events) workspaceEvent.parse(e);
    expect(first.events[1]!.data).toMatchObject({ id: order.id, status: 'writing', price: order.price });
    const second = await ok<Page>(client, 'list-events', { after: first.next_after });
    expect(second.events.map((e) => [e.type, e.data.body])).toEqual([['order.message_received', 'Starting today.']]);
    expect(await ok<Page>(client, 'list-events', { after: second.next_after })).toEqual({ events: [], has_more: false, next_after: second.next_after });
    // Without after: the latest, oldest first.
    expect((await ok<Page>(client, 'list-events', { limit: 5 })).events.map((e) => e.type)).toEqual(['order.placed', 'order.accepted', 'order.message_received']);
    expect((await ok<Page>(client, 'list-events', { type: 'order.accepted' })).events).toHaveLength(1);
  });
});

describe('MCP list-events: a bad cursor — errors', () => {
  it('refuses a bad cursor naming it, and the instructions point agents to it', async () => {
    const { ws } = await setup();
    const client = await connect(url, ws.readKey);
    const bad = await fails(client, 'list-events', { after: 'yesterday' }, 'invalid_input');
    expect(bad).toMatchObject({ code: 'invalid_input', errors: { after: [expect.any(String)] } });
    expect(INSTRUCTIONS).toContain('list-events');
  });
});

describe('MCP list-events: another workspace’s order — security', () => {
  it('not_found naming the order for another workspace’s order and for none; its own order with no events is empty', async () => {
    const one = await setup();
    const other = await setup();
    const order = (await place(one.ws.spendKey, { offer_ids: [one.p.offers[0]!.id], target_url: 'https://buyer.example/' })).json().data[0];
    await sequenceEvents(h.database.pool, h.clock.now());
    const client = await connect(url, other.ws.readKey);
    for (const id of [order.id, order.id + 1_000_000]) {
      for (const args of [{ limit: 10, order_id: id }, { after: 'evt_0000000000000000', order_id: id }]) {
        const body = await fails(client, 'list-events', args, 'not_found');
        expect(body.message).toBe(`Order ${id} not found.`);
      }
    }
    expect((await ok<Page>(await connect(url, one.ws.readKey), 'list-events', { order_id: order.id })).events.map((e) => e.type)).toEqual(['order.placed']);
    // An order of its own with no event in the feed yet: an empty answer.
    const fresh = (await place(other.ws.spendKey, { offer_ids: [one.p.offers[0]!.id], target_url: 'https://buyer.example/' })).json().data[0];
    expect(await ok<Page>(client, 'list-events', { order_id: fresh.id })).toEqual({ events: [], has_more: false, next_after: 'evt_0000000000000000' });
  });
});
