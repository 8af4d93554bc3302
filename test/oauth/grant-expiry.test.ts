import { describe, expect, it } from 'vitest';
import { createKey } from '../../src/domain/keys/key-service.js';
import { setupApp } from '../helpers/app.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { bearer } from '../helpers/fixtures.js';
import { orderKit } from '../helpers/orders.js';
import { grantedTokens, mcpCall, PUBLIC } from './helpers.js';

// A connected app's grant is resolved like a key and cached for at most 5 s. One whose expiry
// falls inside that window must not spend once the (test) clock has passed it: known when the
// grant was cached, the cache entry ends with it; set after (the row changed under the cache), the
// spending transaction reads it again. Nothing is placed or paid either way.
const h = await setupApp({ PUBLIC_BASE_URL: PUBLIC });
const kit = orderKit(h);
const pool = h.database.pool;
const TARGET = 'https://buyer.example/';
const DAY = 86_400_000;

interface Called {
  status: number;
  isError: boolean;
  structured: Record<string, unknown> | undefined;
}
async function call(token: string, name: string, args: Record<string, unknown>): Promise<Called> {
  const res = await mcpCall(h, token, name, args);
  if (res.statusCode !== 200) return { status: res.statusCode, isError: true, structured: undefined };
  const result = res.json().result as { isError?: boolean; structuredContent?: Record<string, unknown>; content?: { text: string }[] };
  return { status: 200, isError: Boolean(result.isError), structured: result.structuredContent ?? (result.isError ? JSON.parse(result.content![0]!.text) : undefined) };
}

/** Refused as an expired principal: 401 at the door, or the tool's `unauthenticated` from the spending transaction. */
function expectExpiredRefusal(c: Called) {
  expect(c.isError).toBe(true);
  if (c.status === 200) expect(c.structured).toMatchObject({ code: 'unauthenticated' });
  else expect(c.status).toBe(401);
}

async function ledgerOf(workspaceId: number) {
  const orders = (await pool.query('SELECT count(*)::int AS n FROM orders WHERE workspace_id = $1', [workspaceId])).rows[0].n as number;
  return { orders, ...(await kit.balances(workspaceId)) };
}

const setExpiry = (clientId: string, at: number) => pool.query('UPDATE api_keys SET expires_at = $2 WHERE oauth_client_id = $1', [clientId, new Date(at)]);

describe('a spending grant that expires inside the 5 s its lookup is cached — security', () => {
  it('expiry set after it was cached: confirming a placement is refused and spends nothing', async () => {
    const p = await publisherWithOutlet(h.database, [{ publisher_price_cents: 10_000 }]);
    const g = await grantedTokens(h, { scope: 'read spend', fields: { can_place_orders: '1' } });
    const args = { offer_ids: [p.offers[0]!.id], target_url: TARGET };
    const quote = await call(g.tokens.access_token, 'place-orders', args); // the grant is now cached
    expect(quote.isError, JSON.stringify(quote.structured)).toBe(false);
    const before = await ledgerOf(g.workspaceId);
    await setExpiry(g.client.client_id, h.clock.now() + 1_000);
    h.clock.advance(1_500); // past the expiry, inside the cache's 5 s
    expectExpiredRefusal(await call(g.tokens.access_token, 'place-orders', { ...args, confirmation_token: quote.structured!.confirmation_token }));
    expect(await ledgerOf(g.workspaceId)).toEqual(before);
  });

  it('expiry given at consent, reached while cached: confirming a placement is refused and spends nothing', async () => {
    const p = await publisherWithOutlet(h.database, [{ publisher_price_cents: 10_000 }]);
    const g = await grantedTokens(h, { scope: 'read spend', fields: { can_place_orders: '1', expires_in_days: '1' } });
    const args = { offer_ids: [p.offers[0]!.id], target_url: TARGET };
    h.clock.advance(DAY - 1_000);
    const quote = await call(g.tokens.access_token, 'place-orders', args); // cached, one second before the expiry
    expect(quote.isError, JSON.stringify(quote.structured)).toBe(false);
    const before = await ledgerOf(g.workspaceId);
    h.clock.advance(1_500);
    expectExpiredRefusal(await call(g.tokens.access_token, 'place-orders', { ...args, confirmation_token: quote.structured!.confirmation_token }));
    expect(await ledgerOf(g.workspaceId)).toEqual(before);
  });

  it('expiry set after it was cached: confirming the approval of a placement is refused and pays nothing', async () => {
    const p = await publisherWithOutlet(h.database, [{ publisher_price_cents: 10_000 }]);
    const g = await grantedTokens(h, { scope: 'read spend', fields: { can_place_orders: '1' } });
    // An order of the grant's workspace, live and waiting for the buyer's approval.
    const key = await createKey(pool, { workspaceId: g.workspaceId, canPlaceOrders: true });
    const id = await kit.accepted(key.key, p.publisherKey, p.offers[0]!.id, TARGET);
    const published = await h.app.inject({ method: 'POST', url: `/api/v1/publisher/orders/${id}/publish`, headers: bearer(p.publisherKey), payload: { live_url: `https://${p.domain}/post` } });
    expect(published.json().data.status).toBe('live_review');

    const quote = await call(g.tokens.access_token, 'approve-placement', { order_id: id });
    expect(quote.isError, JSON.stringify(quote.structured)).toBe(false);
    const before = await ledgerOf(g.workspaceId);
    await setExpiry(g.client.client_id, h.clock.now() + 1_000);
    h.clock.advance(1_500);
    expectExpiredRefusal(await call(g.tokens.access_token, 'approve-placement', { order_id: id, confirmation_token: quote.structured!.confirmation_token }));
    expect((await pool.query('SELECT status FROM orders WHERE id = $1', [id])).rows[0].status).toBe('live_review');
    expect(await ledgerOf(g.workspaceId)).toEqual(before);
  });
});
