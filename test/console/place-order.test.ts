import { describe, expect, it } from 'vitest';
import { place, placementGroups } from '../../src/domain/orders/place-orders.js';
import { durationsFrom } from '../../src/domain/orders/states.js';
import { addMember, changeRole } from '../../src/domain/users/memberships.js';
import { createUser } from '../../src/domain/users/user-service.js';
import { setupApp } from '../helpers/app.js';
import { workspaceWithKeys } from '../helpers/fixtures.js';
import { expectLedgerInvariants } from '../helpers/ledger-invariants.js';
import { articleFor, orderKit } from '../helpers/orders.js';
import { consoleClient } from './helpers.js';

// Placing an order from the console through app.inject, as a browser without JavaScript: search,
// the outlet's offers, the brief, the confirmation page, then the REST route's place() with the
// person as the buyer. The same flow in Chromium, to `completed`, is browser-orders.test.ts.

const TARGET = 'https://buyer.example/product';
const h = await setupApp({ SIGNIN_FAILURES_PER_ADDRESS: 1000 });
const kit = orderKit(h);
const pool = h.database.pool;
const password = 'correct horse battery';
let n = 0;

async function person(name: string) {
  n++;
  const email = `placer${n}@example.com`;
  const user = await createUser(h.database.pool, { email, name, password });
  const c = consoleClient(h, `10.8.0.${n}`);
  expect((await c.post('/app/sign-in', { email, password })).statusCode).toBe(303);
  return { c, user };
}

const { ws, p } = await kit.setup(
  [
    { content_by: 'publisher', publisher_price_cents: 10_000 },
    { content_by: 'buyer', publisher_price_cents: 5_000 },
  ],
  1_000_000,
  'placing-news.test',
);
const owner = await person('Olga Owner');
await addMember(h.database.pool, { workspaceId: ws.workspaceId }, owner.user.id, 'owner');
const w = `/app/w/${ws.workspaceId}`;
const outletId = p.outletId;
const offerUrl = (i: number) => `${w}/outlets/${outletId}/offers/${p.offers[i]!.id}`;
const brief = { target_url: TARGET, anchor_text: 'our product', brief: 'A review, please.' };

const ordersOf = async (workspaceId: number) =>
  (await pool.query<{ id: string; placed_by_key_id: number | null; placed_by_user_id: number | null; status: string }>(
    'SELECT id, placed_by_key_id, placed_by_user_id, status FROM orders WHERE workspace_id = $1 ORDER BY id',
    [workspaceId],
  )).rows;

/** The hidden fields of the confirmation page's "Place order" form (the brief as sent and the idempotency key). */
function hiddenFields(page: string): Record<string, string> {
  const out: Record<string, string> = {};
  const start = page.search(/<form method="post" action="[^"]+\/place"/);
  const body = page.slice(start, page.indexOf('</form>', start));
  for (const m of body.matchAll(/<input type="hidden" name="([a-z_]+)" value="([^"]*)">/g)) {
    if (m[1] !== '_csrf') out[m[1]!] = m[2]!.replace(/&amp;/g, '&').replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>');
  }
  return out;
}

/** Brief → confirmation page; answers the confirmation's fields. */
async function review(who: Awaited<ReturnType<typeof person>>, i: number, fields: Record<string, string> = brief) {
  const confirm = await who.c.post(offerUrl(i), fields);
  expect(confirm.statusCode, confirm.body).toBe(200);
  return { page: confirm.body, fields: hiddenFields(confirm.body) };
}

describe('Console order placing (/app/w/{id}/outlets/…/place) — happy', () => {
  it('search, the offers, the brief, the confirmation (price, balance now and after), then the order page', async () => {
    // The search is the REST route's engine: the new outlet shows once the index has it.
    let found = '';
    for (let i = 0; i < 200 && !found.includes(`${w}/outlets/${outletId}"`); i++) {
      found = (await owner.c.get(`${w}/outlets?q=placing-news`)).body;
      if (!found.includes(`${w}/outlets/${outletId}"`)) await new Promise((r) => setTimeout(r, 50));
    }
    expect(found).toContain(`href="${w}/outlets/${outletId}"`);
    expect((await owner.c.get(`${w}/orders`)).body).toContain(`href="${w}/outlets"`);
    const outlet = await owner.c.get(`${w}/outlets/${outletId}`);
    expect(outlet.statusCode).toBe(200);
    expect(outlet.body).toContain(`href="${offerUrl(0)}"`);
    const form = await owner.c.get(offerUrl(0));
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain('name="target_url"');

    const before = await kit.balances(ws.workspaceId);
    const { page, fields } = await review(owner, 0);
    expect(page).toContain('Available balance now');
    expect(page).toContain('$10,000.00');
    expect(page).toContain('Available balance after');
    // Reviewing places nothing.
    expect(await ordersOf(ws.workspaceId)).toEqual([]);
    expect(fields.idempotency_key).toMatch(/^[0-9a-f-]{36}$/);
    expect(fields.intent).toBeUndefined();
    // "Change the brief" shows the form again as typed.
    const edit = await owner.c.post(offerUrl(0), { ...brief, intent: 'edit' });
    expect(edit.statusCode).toBe(200);
    expect(edit.body).toContain('value="our product"');
    expect(edit.body).toContain('>A review, please.</textarea>');

    const placed = await owner.c.post(`${offerUrl(0)}/place`, fields, { from: offerUrl(0) });
    expect(placed.statusCode, placed.body).toBe(303);
    const [order] = await ordersOf(ws.workspaceId);
    expect(order).toMatchObject({ placed_by_key_id: null, placed_by_user_id: owner.user.id, status: 'awaiting_acceptance' });
    expect(placed.headers.location).toBe(`${w}/orders/${order!.id}?done=placed`);
    const orderPage = await owner.c.get(String(placed.headers.location));
    expect(orderPage.body).toContain('Placed:');
    expect(orderPage.body).toContain(TARGET);
    const after = await kit.balances(ws.workspaceId);
    expect(Number(before.available) - Number(after.available)).toBe(p.offers[0]!.price);
    expect(Number(after.held) - Number(before.held)).toBe(p.offers[0]!.price);
    // Both parties' order.placed events, as for a placement through the API.
    const { rows: events } = await pool.query(`SELECT type, workspace_id, publisher_id FROM events WHERE type = 'order.placed' AND order_id = $1`, [order!.id]);
    expect(events.length).toBe(2);
    await expectLedgerInvariants(h.database);
  });

  it('the confirmation sent twice places one order; the second lands on the same order', async () => {
    const { ws: w2 } = { ws: await workspaceWithKeys(h.database.pool, { balanceCents: 1_000_000 }) };
    const twice = await person('Tess Twice');
    await addMember(h.database.pool, { workspaceId: w2.workspaceId }, twice.user.id, 'owner');
    const url = `/app/w/${w2.workspaceId}/outlets/${outletId}/offers/${p.offers[1]!.id}`;
    const confirm = await twice.c.post(url, { ...brief, content_title: 'Our product, reviewed', content: articleFor(TARGET) });
    expect(confirm.statusCode, confirm.body).toBe(200);
    const fields = hiddenFields(confirm.body);
    const [a, b] = await Promise.all([
      twice.c.post(`${url}/place`, fields, { from: url }),
      twice.c.post(`${url}/place`, fields, { from: url }),
    ]);
    const again = await twice.c.post(`${url}/place`, fields, { from: url });
    const orders = await ordersOf(w2.workspaceId);
    expect(orders.length).toBe(1);
    // The article came with the brief: the publisher reviews it.
    expect(orders[0]!.status).toBe('awaiting_acceptance');
    for (const res of [a, b, again]) expect(res.headers.location).toBe(`/app/w/${w2.workspaceId}/orders/${orders[0]!.id}?done=placed`);
    // The same key with another brief is refused, naming the key.
    const changed = await twice.c.post(`${url}/place`, { ...fields, anchor_text: 'something else' }, { from: url });
    expect(changed.statusCode).toBe(422);
    expect(changed.body).toContain('already placed a different order');
    expect((await ordersOf(w2.workspaceId)).length).toBe(1);
    await expectLedgerInvariants(h.database);
    // The record is kept 24 h, then the sweep purges it with the REST requests' records.
    const kept = 'SELECT count(*)::int AS n FROM person_idempotency_records WHERE user_id = $1';
    expect((await pool.query(kept, [twice.user.id])).rows[0].n).toBe(1);
    await pool.query(`UPDATE person_idempotency_records SET expires_at = $2 WHERE user_id = $1`, [twice.user.id, new Date(h.clock.now() - 1000)]);
    await kit.sweep();
    expect((await pool.query(kept, [twice.user.id])).rows[0].n).toBe(0);
  });
});

describe('Console order placing (/app/w/{id}/outlets/…/place): prices, fields, balance, rules — errors', () => {
  it('a price changed after the confirmation page was shown: 409, nothing placed, the new price on the brief', async () => {
    const { p: p3 } = await kit.setup([{ publisher_price_cents: 10_000 }]);
    const url = `${w}/outlets/${p3.outletId}/offers/${p3.offers[0]!.id}`;
    const confirm = await owner.c.post(url, brief);
    expect(confirm.statusCode).toBe(200);
    const shown = hiddenFields(confirm.body);
    expect(Number(shown.quoted_cents)).toBe(p3.offers[0]!.price);
    await pool.query('UPDATE offers SET publisher_price_cents = publisher_price_cents * 2, fee_cents = fee_cents * 2 WHERE id = $1', [p3.offers[0]!.id]);
    const before = (await ordersOf(ws.workspaceId)).length;
    const res = await owner.c.post(`${url}/place`, shown, { from: url });
    expect(res.statusCode).toBe(409);
    expect(res.body).toContain('the price changed since the confirmation page');
    expect((await ordersOf(ws.workspaceId)).length).toBe(before);
    // A forged confirmation without the price it showed places nothing either.
    const { quoted_cents: _, ...noQuote } = shown;
    const incomplete = await owner.c.post(`${url}/place`, noQuote, { from: url });
    expect(incomplete.statusCode).toBe(422);
    expect(incomplete.body).toContain('the confirmation was incomplete');
    expect((await ordersOf(ws.workspaceId)).length).toBe(before);
  });

  it('bad fields: 422, the brief again with what was typed and each field named', async () => {
    const bad = await owner.c.post(offerUrl(1), { target_url: 'ftp://nowhere', anchor_text: 'x'.repeat(201), brief: '', content_title: 'A title', content: '' });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toContain('Nothing was placed: check the fields below.');
    expect(bad.body).toMatch(/id="f-target_url-error">Link to [^<]+/);
    expect(bad.body).toMatch(/id="f-anchor_text-error">Anchor text [^<]+/);
    expect(bad.body).toMatch(/id="f-content-error">Article \(Markdown\) is required with content_title/);
    expect(bad.body).toContain('value="ftp://nowhere"');
    // A forged confirmation without its idempotency key, or with bad fields, places nothing either.
    const before = (await ordersOf(ws.workspaceId)).length;
    expect((await owner.c.post(`${offerUrl(0)}/place`, brief, { from: offerUrl(0) })).statusCode).toBe(422);
    const { fields } = await review(owner, 0);
    const forged = await owner.c.post(`${offerUrl(0)}/place`, { ...fields, target_url: 'not a url' }, { from: offerUrl(0) });
    expect(forged.statusCode).toBe(422);
    expect(forged.body).toContain('id="f-target_url-error"');
    expect((await ordersOf(ws.workspaceId)).length).toBe(before);
  });

  it('a balance too low: the confirmation says so, and placing answers 402 with the domain’s message; nothing is held', async () => {
    const poor = await workspaceWithKeys(h.database.pool, { balanceCents: 100 });
    const who = await person('Pat Poor');
    await addMember(h.database.pool, { workspaceId: poor.workspaceId }, who.user.id, 'owner');
    const url = `/app/w/${poor.workspaceId}/outlets/${outletId}/offers/${p.offers[0]!.id}`;
    const confirm = await who.c.post(url, brief);
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain('lower than the price');
    // The quote's figures: the balance after never below zero, and what is missing said.
    expect(confirm.body).toContain('<dt>Available balance now</dt><dd>$1.00</dd>');
    expect(confirm.body).toContain('<dt>Available balance after</dt><dd>$0.00</dd>');
    expect(confirm.body).toContain(`<dt>Short by</dt><dd>$${((p.offers[0]!.price - 100) / 100).toFixed(2)}</dd>`);
    const res = await who.c.post(`${url}/place`, hiddenFields(confirm.body), { from: url });
    expect(res.statusCode).toBe(402);
    expect(res.body).toContain('The balance is too low:');
    expect(res.body).toContain('more is needed');
    expect(res.body).toContain(`value="${TARGET}"`);
    expect(await ordersOf(poor.workspaceId)).toEqual([]);
    await expectLedgerInvariants(h.database);
  });

  it('the approval rule applies to a person too: above the maximum order, 403 with its message', async () => {
    const capped = await workspaceWithKeys(h.database.pool, { balanceCents: 1_000_000 });
    await pool.query('UPDATE workspaces SET max_order_cents = 100 WHERE id = $1', [capped.workspaceId]);
    const who = await person('Cap Owner');
    await addMember(h.database.pool, { workspaceId: capped.workspaceId }, who.user.id, 'owner');
    const res = await who.c.post(`/app/w/${capped.workspaceId}/outlets/${outletId}/offers/${p.offers[0]!.id}`, brief);
    expect(res.statusCode).toBe(403);
    expect(res.body).toMatch(/above the workspace(&#39;|')s approval limit/);
  });
});

describe('Console order placing (/app/w/{id}/outlets/…/place): tokens, roles, tenants — security', () => {
  it('forms without their token are 403 and place nothing', async () => {
    const before = (await ordersOf(ws.workspaceId)).length;
    expect((await owner.c.post(offerUrl(0), brief, { csrf: false })).statusCode).toBe(403);
    const { fields } = await review(owner, 0);
    expect((await owner.c.post(`${offerUrl(0)}/place`, fields, { csrf: false })).statusCode).toBe(403);
    expect((await ordersOf(ws.workspaceId)).length).toBe(before);
  });

  it('a member or viewer (no spending) may search but not order: 403 on the brief, the confirmation and placing', async () => {
    for (const role of ['member', 'viewer'] as const) {
      const who = await person(`No Spender ${role}`);
      await addMember(h.database.pool, { workspaceId: ws.workspaceId }, who.user.id, role);
      expect((await who.c.get(`${w}/outlets`)).statusCode).toBe(200);
      const outlet = await who.c.get(`${w}/outlets/${outletId}`);
      expect(outlet.statusCode).toBe(200);
      expect(outlet.body).not.toContain(`href="${offerUrl(0)}"`);
      expect((await who.c.get(`${w}/orders`)).body).not.toContain(`href="${w}/outlets"`);
      expect((await who.c.get(offerUrl(0))).statusCode).toBe(403);
      expect((await who.c.post(offerUrl(0), brief, { from: `${w}/outlets` })).statusCode).toBe(403);
      expect((await who.c.post(`${offerUrl(0)}/place`, { ...brief, idempotency_key: crypto.randomUUID() }, { from: `${w}/outlets` })).statusCode).toBe(403);
    }
  });

  it('the role is read again inside the placing transaction: an owner lowered to member places nothing', async () => {
    const boss = await person('Bo Boss');
    const own = await workspaceWithKeys(h.database.pool, { balanceCents: 1_000_000 });
    await addMember(h.database.pool, { workspaceId: own.workspaceId }, boss.user.id, 'owner');
    await addMember(h.database.pool, { workspaceId: own.workspaceId }, (await person('Other Owner')).user.id, 'owner');
    await changeRole(h.database.pool, { workspaceId: own.workspaceId }, boss.user.id, 'member');
    const deps = placementGroups({ pool, clock: h.clock, durations: durationsFrom(h.config) });
    const input = { offer_ids: [p.offers[0]!.id], target_url: TARGET };
    await expect(place(deps, { workspaceId: own.workspaceId, userId: boss.user.id }, input, { once: undefined })).rejects.toMatchObject({ code: 'forbidden' });
    const stranger = await person('Sy Stranger');
    await expect(place(deps, { workspaceId: own.workspaceId, userId: stranger.user.id }, input, { once: undefined })).rejects.toMatchObject({ code: 'not_found' });
    expect(await ordersOf(own.workspaceId)).toEqual([]);
  });

  it('an unknown offer, an inactive one, another outlet’s, another workspace’s pages, a publisher account: 404', async () => {
    const other = await workspaceWithKeys(h.database.pool, { balanceCents: 1_000_000 });
    const { p: p2 } = await kit.setup([{}]);
    const outlet2 = p2.outletId;
    await pool.query('UPDATE offers SET active = false WHERE id = $1', [p2.offers[0]!.id]);
    const urls = [
      `${w}/outlets/${outletId}/offers/999999999`,
      `${w}/outlets/${outletId}/offers/x1`,
      `${w}/outlets/${outlet2}/offers/${p2.offers[0]!.id}`,
      `${w}/outlets/${outlet2}/offers/${p.offers[0]!.id}`,
      `${w}/outlets/999999999`,
      `/app/w/${other.workspaceId}/outlets`,
      `/app/w/${other.workspaceId}/outlets/${outletId}/offers/${p.offers[0]!.id}`,
      `/app/p/${p.publisherId}/outlets`,
    ];
    for (const url of urls) expect((await owner.c.get(url)).statusCode, url).toBe(404);
    const placeInactive = await owner.c.post(`${w}/outlets/${outlet2}/offers/${p2.offers[0]!.id}/place`, { ...brief, idempotency_key: crypto.randomUUID() }, { from: `${w}/outlets` });
    expect(placeInactive.statusCode).toBe(404);
    expect((await owner.c.post(`/app/w/${other.workspaceId}/outlets/${outletId}/offers/${p.offers[0]!.id}/place`, brief, { from: `${w}/outlets` })).statusCode).toBe(404);
  });
});
