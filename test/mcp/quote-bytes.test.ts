import { describe, expect, it } from 'vitest';
import { createKey } from '../../src/domain/keys/key-service.js';
import { setupApp } from '../helpers/app.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { ManualClock } from '../helpers/clock.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';
import { articleFor, mcpHeaders, rpc } from './helpers.js';

// The quotes of the two spending tools, written out in full: every field, in the order the
// answer writes them, so the quote's arithmetic (the domain's) and its rendering (MCP's) answer
// the same bytes whoever computes them. The other MCP tests check parts of a quote; this one
// pins the whole text, a budget, a shortfall and an approval included.

const clock = new ManualClock(Date.parse('2026-03-10T12:00:00Z'));
const h = await setupApp({}, { clock });
const pool = h.database.pool;

const call = async (key: string, name: string, args: Record<string, unknown>) => {
  const res = await h.app.inject({ method: 'POST', url: '/mcp', headers: mcpHeaders(key), payload: rpc('tools/call', { name, arguments: args }) });
  expect(res.statusCode).toBe(200);
  return res.json().result as { isError?: boolean; content: { text: string }[]; structuredContent?: Record<string, unknown> };
};

/** The quote part of a tool's first step, as the text it was sent as. */
async function quoteText(key: string, name: string, args: Record<string, unknown>) {
  const result = await call(key, name, args);
  expect(result.isError, result.content[0]!.text).toBeFalsy();
  const text = result.content[0]!.text;
  // The text is the structured result written out; the quote is its own member.
  const parsed = JSON.parse(text) as { quote: unknown; next_step: string };
  expect(text).toContain(JSON.stringify(parsed.quote));
  return { quote: JSON.stringify(parsed.quote), nextStep: parsed.next_step };
}

const ws = await workspaceWithKeys(pool, { balanceCents: 10_000 });
const budgeted = await createKey(pool, {
  workspaceId: ws.workspaceId,
  canPlaceOrders: true,
  name: 'Budgeted agent',
  limits: { orderLimitCents: 50_000, dailyLimitCents: 100_000 },
  needsApproval: true,
});
const p = await publisherWithOutlet(h.database, [{ publisher_price_cents: 10_000 }, { publisher_price_cents: 5_000, title: 'Cheap' }], 'quote-bytes.example');
const args = { offer_ids: p.offers.map((o) => o.id), target_url: 'https://buyer.example/', anchor_text: 'buyer' };
// The helper numbers outlets across the files a worker runs (`Outlet 7`): the name as stored.
const outletName = (await pool.query<{ name: string }>('SELECT name FROM outlets WHERE id = $1', [p.outletId])).rows[0]!.name;
const outlet = { id: p.outletId, name: outletName, domain: 'quote-bytes.example' };

describe('MCP quotes, written out in full — happy', () => {
  it('place-orders: items, a shortfall, the budget after the order, a key that needs approval', async () => {
    const { quote, nextStep } = await quoteText(budgeted.key, 'place-orders', args);
    const expected = {
      items: [
        { offer_id: p.offers[0]!.id, outlet, format: 'guest_post', title: 'Offer 1', content_by: 'publisher', turnaround_days: 7, price: 12_000, price_formatted: '$120.00' },
        { offer_id: p.offers[1]!.id, outlet, format: 'guest_post', title: 'Cheap', content_by: 'publisher', turnaround_days: 7, price: 6_000, price_formatted: '$60.00' },
      ],
      total_cents: 18_000,
      total_cents_formatted: '$180.00',
      paid_from: 'available',
      balance: 10_000,
      balance_formatted: '$100.00',
      balance_after: 0,
      balance_after_formatted: '$0.00',
      shortfall_cents: 8_000,
      shortfall_cents_formatted: '$80.00',
      budget: {
        order_limit_cents: 50_000,
        order_limit_formatted: '$500.00',
        day: {
          limit_cents: 100_000,
          spent_cents: 18_000,
          remaining_cents: 82_000,
          resets_at: '2026-03-11T00:00:00Z',
          limit_formatted: '$1,000.00',
          spent_formatted: '$180.00',
          remaining_formatted: '$820.00',
        },
        month: null,
        expires_at: null,
      },
      approval: { required: true, reason: 'key_needs_approval' },
    };
    expect(quote).toBe(JSON.stringify(expected));
    expect(nextStep).toContain('The balance is $80.00 short: confirming fails with insufficient_balance');
    expect(nextStep).toContain('After confirming, a person must approve it in the console');
  });

  it('place-orders: a key without a budget, the balance enough, no approval', async () => {
    const rich = await workspaceWithKeys(pool, { balanceCents: 1_000_000 });
    const { quote } = await quoteText(rich.spendKey, 'place-orders', { ...args, offer_ids: [p.offers[1]!.id] });
    const expected = {
      items: [{ offer_id: p.offers[1]!.id, outlet, format: 'guest_post', title: 'Cheap', content_by: 'publisher', turnaround_days: 7, price: 6_000, price_formatted: '$60.00' }],
      total_cents: 6_000,
      total_cents_formatted: '$60.00',
      paid_from: 'available',
      balance: 1_000_000,
      balance_formatted: '$10,000.00',
      balance_after: 994_000,
      balance_after_formatted: '$9,940.00',
      shortfall_cents: 0,
      shortfall_cents_formatted: '$0.00',
      budget: null,
      approval: { required: false, reason: null },
    };
    expect(quote).toBe(JSON.stringify(expected));
  });

  it('approve-placement: the order, paid from what was held, the budget as it is', async () => {
    const buyer = await workspaceWithKeys(pool, { balanceCents: 1_000_000 });
    const key = await createKey(pool, { workspaceId: buyer.workspaceId, canPlaceOrders: true, limits: { dailyLimitCents: 100_000 } });
    const placed = await h.app.inject({
      method: 'POST',
      url: '/api/v1/orders',
      headers: { ...bearer(key.key), 'idempotency-key': 'quote-bytes-1' },
      payload: { offer_ids: [p.offers[0]!.id], target_url: 'https://buyer.example/', anchor_text: 'buyer' },
    });
    expect(placed.statusCode, placed.body).toBe(201);
    const id = placed.json().data[0].id as number;
    const publisher = (path: string, payload?: object) =>
      h.app.inject({ method: 'POST', url: `/api/v1/publisher/orders/${id}/${path}`, headers: bearer(p.publisherKey), ...(payload ? { payload } : {}) });
    // Not yet live: the quote is refused with the order's status, in the words the action uses.
    const early = await call(key.key, 'approve-placement', { order_id: id });
    expect(early.isError).toBe(true);
    expect(JSON.parse(early.content[0]!.text)).toMatchObject({
      code: 'conflict',
      message: 'Cannot approve the placement: the order is awaiting acceptance.',
      status: 'awaiting_acceptance',
    });
    expect((await publisher('accept')).statusCode).toBe(200);
    expect((await publisher('draft', { title: 'A draft by the publisher', body: articleFor('https://buyer.example/', 'buyer') })).statusCode).toBe(200);
    expect((await h.app.inject({ method: 'POST', url: `/api/v1/orders/${id}/approve-draft`, headers: bearer(key.key) })).statusCode).toBe(200);
    expect((await publisher('publish', { live_url: 'https://quote-bytes.example/live' })).statusCode).toBe(200);

    const { quote, nextStep } = await quoteText(key.key, 'approve-placement', { order_id: id });
    const expected = {
      items: [
        {
          order_id: id,
          outlet,
          offer: { id: p.offers[0]!.id, format: 'guest_post', title: 'Offer 1' },
          live_url: 'https://quote-bytes.example/live',
          price: 12_000,
          price_formatted: '$120.00',
        },
      ],
      total_cents: 12_000,
      total_cents_formatted: '$120.00',
      paid_from: 'held',
      balance: 988_000,
      balance_formatted: '$9,880.00',
      balance_after: 988_000,
      balance_after_formatted: '$9,880.00',
      shortfall_cents: 0,
      shortfall_cents_formatted: '$0.00',
      budget: {
        order_limit_cents: null,
        order_limit_formatted: null,
        day: {
          limit_cents: 100_000,
          spent_cents: 12_000,
          remaining_cents: 88_000,
          resets_at: '2026-03-11T00:00:00Z',
          limit_formatted: '$1,000.00',
          spent_formatted: '$120.00',
          remaining_formatted: '$880.00',
        },
        month: null,
        expires_at: null,
      },
      approval: { required: false, reason: null },
    };
    expect(quote).toBe(JSON.stringify(expected));
    expect(nextStep).not.toContain('short');
  });
});

describe('MCP quotes refused as the action would be — errors', () => {
  it('approve-placement of an unknown order: not_found, as get-order answers it', async () => {
    const missing = await call(ws.spendKey, 'approve-placement', { order_id: 2_000_000_000 });
    expect(JSON.parse(missing.content[0]!.text)).toMatchObject({ code: 'not_found', message: 'Order not found.' });
  });
});
