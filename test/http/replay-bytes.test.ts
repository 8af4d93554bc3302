import { describe, expect, it } from 'vitest';
import { setupApp } from '../helpers/app.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';
import { articleFor, mcpHeaders, rpc } from '../mcp/helpers.js';

// A record keeps the domain's outcome, and each adapter encodes it (docs/orders.md): a replay is
// encoded again from what was kept. These prove it sends what the first answer sent, byte for
// byte, with the same status: a placement, a kept refusal (402, naming the first request), an
// action on an order, and MCP's confirmed placement.
const h = await setupApp();
const TARGET = 'https://buyer.example/';
let seq = 0;

async function buyer(balanceCents: number) {
  const p = await publisherWithOutlet(h.database, [{ publisher_price_cents: 10_000 }, { publisher_price_cents: 5_000, title: 'Cheap', content_by: 'buyer' }]);
  const ws = await workspaceWithKeys(h.database.pool, { balanceCents });
  return { p, ws, args: { offer_ids: p.offers.map((o) => o.id), target_url: TARGET, anchor_text: 'our product', brief: 'Ünïcödé "quotes" \\ and\nlines' } };
}

const post = (url: string, key: string, idem: string, payload: object) =>
  h.app.inject({ method: 'POST', url, headers: { ...bearer(key), 'idempotency-key': idem }, payload });

/** The first answer and its replay: same status, same content type, same bytes; only the replay says so. */
async function expectReplayed(send: () => ReturnType<typeof post>) {
  const first = await send();
  const again = await send();
  expect(first.headers['idempotent-replayed']).toBeUndefined();
  expect(again.headers['idempotent-replayed']).toBe('true');
  expect(again.statusCode).toBe(first.statusCode);
  expect(again.headers['content-type']).toBe(first.headers['content-type']);
  expect(again.rawPayload.equals(first.rawPayload)).toBe(true);
  return first;
}

describe('POST /api/v1/orders and POST /api/v1/orders/{id}/cancel: a replay sends the first answer again — happy', () => {
  it('a placement (201), its orders as placed', async () => {
    const { ws, args } = await buyer(1_000_000);
    const idem = `replay-${++seq}`;
    const first = await expectReplayed(() => post('/api/v1/orders', ws.spendKey, idem, args));
    expect(first.statusCode).toBe(201);
    expect(first.json().data).toHaveLength(2);
  });

  it('a placement with content', async () => {
    const { ws, p, args } = await buyer(1_000_000);
    const body = { ...args, offer_ids: [p.offers[1]!.id], content: articleFor(TARGET), content_title: 'A useful article to replay' };
    const idem = `replay-${++seq}`;
    const first = await expectReplayed(() => post('/api/v1/orders', ws.spendKey, idem, body));
    expect(first.json().data[0].content.checks.length).toBeGreaterThan(0);
  });

  it('a kept refusal (402): the replay names the first request', async () => {
    const { ws, args } = await buyer(100);
    const idem = `replay-${++seq}`;
    const first = await expectReplayed(() => post('/api/v1/orders', ws.spendKey, idem, args));
    expect(first.statusCode).toBe(402);
    expect(first.json()).toMatchObject({ code: 'insufficient_balance', request_id: first.headers['x-request-id'] });
  });

  it('an action on an order (cancel, 200) and a kept 409 from its state', async () => {
    const { ws, args } = await buyer(1_000_000);
    const placed = await post('/api/v1/orders', ws.spendKey, `replay-${++seq}`, args);
    const id = placed.json().data[0].id as number;
    const [c, l] = [`replay-${++seq}-c`, `replay-${seq}-l`];
    const cancel = await expectReplayed(() => post(`/api/v1/orders/${id}/cancel`, ws.spendKey, c, {}));
    expect(cancel.statusCode).toBe(200);
    const late = await expectReplayed(() => post(`/api/v1/orders/${id}/cancel`, ws.spendKey, l, {}));
    expect(late.statusCode).toBe(409);
  });
});

describe('MCP place-orders: a confirmed placement called again answers the first result — happy', () => {
  it('same status and bytes, but for `replayed` and the call id', async () => {
    const { ws, args } = await buyer(1_000_000);
    const call = (id: number, a: object) =>
      h.app.inject({ method: 'POST', url: '/mcp', headers: mcpHeaders(ws.spendKey), payload: rpc('tools/call', { name: 'place-orders', arguments: a }, id) });
    const quote = (await call(1, args)).json().result.structuredContent as { confirmation_token: string };
    const confirmed = { ...args, confirmation_token: quote.confirmation_token };
    const first = await call(2, confirmed);
    const again = await call(2, confirmed);
    expect(again.statusCode).toBe(first.statusCode);
    const result = first.json().result.structuredContent;
    expect(result).toMatchObject({ stage: 'done', replayed: false });
    expect(result.orders).toHaveLength(2);
    expect(again.json().result.structuredContent.replayed).toBe(true);
    // `replayed` is written twice: in the structured result and in its text copy.
    const unreplayed = again.body.replaceAll('"replayed":true', '"replayed":false').replaceAll('\\"replayed\\":true', '\\"replayed\\":false');
    expect(unreplayed).toBe(first.body);
  });
});
