import { describe, expect, it } from 'vitest';
import { sequenceEvents } from '../../src/domain/events/sequencer.js';
import { buyerOrders } from '../../src/domain/orders/buyer-actions.js';
import { durationsFrom } from '../../src/domain/orders/states.js';
import { addMember, changeRole } from '../../src/domain/users/memberships.js';
import { createUser } from '../../src/domain/users/user-service.js';
import { setupApp } from '../helpers/app.js';
import { bearer } from '../helpers/fixtures.js';
import { expectLedgerInvariants } from '../helpers/ledger-invariants.js';
import { articleFor, orderKit } from '../helpers/orders.js';
import { html, startPages } from '../helpers/pages.js';
import { mcpHeaders, rpc } from '../mcp/helpers.js';
import { consoleClient } from './helpers.js';

// The orders desk through app.inject, as a browser without JavaScript: each action is the
// domain call of its REST route; refusals (another party's order, a form without its token, a
// state that moved on, a role that may not) are shown as pages. The whole flow in Chromium is
// browser-orders.test.ts.

const DOMAIN = 'desk-news.test';
const TARGET = 'https://buyer.example/product';
const pages = {} as Record<string, ReturnType<typeof html>>;
const site = await startPages(pages);
const h = await setupApp({
  OUTBOUND_ALLOW_LOOPBACK: true,
  OUTBOUND_RESOLVE: new Map([[DOMAIN, '127.0.0.1']]),
  LINK_CHECKS_PER_DOMAIN_PER_SECOND: 1000,
  SIGNIN_FAILURES_PER_ADDRESS: 1000,
});
const kit = orderKit(h);
const password = 'correct horse battery';
let n = 0;

async function person(name: string) {
  n++;
  const email = `desk${n}@example.com`;
  const user = await createUser(h.database.pool, { email, name, password });
  const c = consoleClient(h, `10.9.0.${n}`);
  expect((await c.post('/app/sign-in', { email, password })).statusCode).toBe(303);
  return { c, user };
}

/** A workspace with a balance and its owner, a publisher account with its member, one offer each way of writing. */
async function market() {
  const { ws, p } = await kit.setup(
    [
      { content_by: 'publisher', publisher_price_cents: 10_000, link_type: 'dofollow', sponsored_label: false },
      { content_by: 'buyer', publisher_price_cents: 5_000, link_type: 'dofollow', sponsored_label: false },
    ],
    1_000_000,
    n === 0 ? DOMAIN : `other-${n}.test`,
  );
  const owner = await person('Olga Owner');
  await addMember(h.database.pool, { workspaceId: ws.workspaceId }, owner.user.id, 'owner');
  const writer = await person('Pia Publisher');
  await addMember(h.database.pool, { publisherId: p.publisherId }, writer.user.id, 'member');
  return { ws, p, owner, writer, w: `/app/w/${ws.workspaceId}`, pp: `/app/p/${p.publisherId}` };
}

async function place(m: Awaited<ReturnType<typeof market>>, offer: number, extra: Record<string, unknown> = {}) {
  const res = await kit.place(m.ws.spendKey, { offer_ids: [m.p.offers[offer]!.id], target_url: TARGET, anchor_text: 'our product', brief: 'A review <b>please</b>', ...extra });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data[0].id as number;
}

const statusOf = async (id: number) => (await h.database.pool.query<{ status: string }>('SELECT status FROM orders WHERE id = $1', [id])).rows[0]!.status;
/** US cents as the console writes them for a USD workspace. */
const usd = (cents: number) => `$${(cents / 100).toLocaleString('en-US', { minimumFractionDigits: 2 })}`;
const redirectedTo = (res: { statusCode: number; headers: Record<string, unknown> }) => (res.statusCode === 303 ? String(res.headers.location) : `status ${res.statusCode}`);

const m = await market();

describe('Console orders desk (/app/w/{id}/orders and /app/p/{id}/orders) — happy', () => {
  it('a whole order: the publisher accepts, previews and submits a draft, publishes, re-checks; the buyer approves the draft and the placement', async () => {
    const id = await place(m, 0);
    const desk = await m.writer.c.get(`${m.pp}/orders`);
    expect(desk.statusCode).toBe(200);
    expect(desk.body).toContain('Waiting for you (1)');
    expect(desk.body).toContain(`href="${m.pp}/orders/${id}"`);
    expect(desk.body).toContain('Payouts pending');
    // The buyer's own brief is text, never markup.
    const order = `${m.pp}/orders/${id}`;
    expect((await m.writer.c.get(order)).body).toContain('A review &lt;b&gt;please&lt;/b&gt;');

    expect(redirectedTo(await m.writer.c.post(`${order}/accept`, {}, { from: order }))).toBe(`${order}?done=accepted`);
    expect(await statusOf(id)).toBe('writing');

    const body = `${articleFor(TARGET)}\n\n<script>alert(1)</script> [click](javascript:alert(2))`;
    const preview = await m.writer.c.post(`${order}/draft`, { title: 'Our product, reviewed', body, intent: 'preview' }, { from: order });
    expect(preview.statusCode).toBe(200);
    expect(preview.body).toContain('Preview: as the buyer will see it');
    expect(preview.body).toContain(`<a href="${TARGET}" rel="nofollow noopener noreferrer">our product</a>`);
    expect(preview.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(preview.body).not.toContain('<script>alert');
    expect(preview.body).not.toContain('javascript:alert(2)"');
    expect(await statusOf(id)).toBe('writing');

    const sent = await m.writer.c.post(`${order}/draft`, { title: 'Our product, reviewed', body, intent: 'submit' }, { from: order });
    expect(redirectedTo(sent)).toBe(`${order}?done=draft`);
    expect(await statusOf(id)).toBe('draft_review');

    // The buyer sees the same rendering, and the event on the overview links to the order.
    const buyerOrder = `${m.w}/orders/${id}`;
    const seen = await m.owner.c.get(buyerOrder);
    expect(seen.body).toContain(`<a href="${TARGET}" rel="nofollow noopener noreferrer">our product</a>`);
    expect(seen.body).toContain('&lt;script&gt;');
    await sequenceEvents(h.database.pool, h.clock.now());
    const overview = await m.owner.c.get(m.w);
    // In words, with the action it asks of the buyer now.
    expect(overview.body).toMatch(new RegExp(`Draft submitted</td><td><a href="${m.w}/orders/${id}">Order ${id}</a></td><td>Review the draft</td>`));

    expect(redirectedTo(await m.owner.c.post(`${buyerOrder}/messages`, { body: 'Looks good.' }, { from: buyerOrder }))).toBe(`${buyerOrder}?done=message`);
    expect(redirectedTo(await m.owner.c.post(`${buyerOrder}/approve-draft`, {}, { from: buyerOrder }))).toBe(`${buyerOrder}?done=draft-approved`);
    expect(await statusOf(id)).toBe('publishing');
    await sequenceEvents(h.database.pool, h.clock.now());
    expect((await m.writer.c.get(m.pp)).body).toMatch(new RegExp(`New message</td><td><a href="${m.pp}/orders/${id}">Order ${id}</a></td><td>Read the message and reply</td>`));

    // A URL off the outlet's domain: the API's 422, next to the field.
    const bad = await m.writer.c.post(`${order}/publish`, { live_url: 'https://elsewhere.example/post' }, { from: order });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toContain(`Live URL must be an http(s) URL on ${DOMAIN}`);
    pages['/post'] = html(`<html><body><article><p>Read about <a href="${TARGET}">our product</a> today.</p></article></body></html>`);
    const published = await m.writer.c.post(`${order}/publish`, { live_url: site.url('/post', DOMAIN) }, { from: order });
    expect(redirectedTo(published)).toBe(`${order}?done=published`);
    expect(redirectedTo(await m.writer.c.post(`${order}/recheck`, {}, { from: order }))).toBe(`${order}?done=rechecked`);
    const checked = await m.writer.c.get(order);
    expect(checked.body).toContain('Last checked');
    const live = checked.body.slice(checked.body.indexOf('id="live"'), checked.body.indexOf('id="messages"'));
    expect(live).toContain('Checks of the live page');
    expect(live).toContain('class="check-pass"');
    expect(live).not.toContain('class="check-fail"');
    // The draft's own checks flag what the article holds (shown, blocking nothing).
    expect(checked.body).toContain('Contains &lt;script&gt;, javascript: link.');
    // A second re-check within the minute: the API's 429, on the page.
    const again = await m.writer.c.post(`${order}/recheck`, {}, { from: order });
    expect(again.statusCode).toBe(429);
    expect(again.headers['retry-after']).toBeDefined();

    // The confirmation page shows the price and the balance before anything is paid.
    const before = await kit.balances(m.ws.workspaceId);
    const confirm = await m.owner.c.get(`${buyerOrder}/approve`);
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain('Approve and pay');
    expect(confirm.body).toContain('$120.00');
    expect(await statusOf(id)).toBe('live_review');
    // The figures are the domain's quote, the one MCP's approve-placement answers for the same order.
    const mcp = await h.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { ...mcpHeaders(m.ws.spendKey) },
      payload: rpc('tools/call', { name: 'approve-placement', arguments: { order_id: id } }),
    });
    const quote = mcp.json().result.structuredContent.quote as Record<string, string>;
    expect(confirm.body).toContain(`<dt>Price</dt><dd>${quote.total_cents_formatted}</dd>`);
    expect(confirm.body).toContain(`<dt>Available balance now</dt><dd>${quote.balance_formatted}</dd>`);
    expect(confirm.body).toContain(`<dt>Available balance after</dt><dd>${quote.balance_after_formatted}</dd>`);
    expect(quote.balance_after_formatted).toBe(quote.balance_formatted);
    expect(confirm.body).toContain(`<dt>Held for orders after</dt><dd>${usd(before.held - 12_000)}</dd>`);
    expect(redirectedTo(await m.owner.c.post(`${buyerOrder}/approve`, {}, { from: `${buyerOrder}/approve` }))).toBe(`${buyerOrder}?done=approved`);
    expect(await statusOf(id)).toBe('completed');
    const after = await kit.balances(m.ws.workspaceId);
    expect(after.available).toBe(before.available);
    expect(after.held).toBe(before.held - m.p.offers[0]!.price);
    expect(await kit.pending(m.p.publisherId)).toBe(10_000);
    // Approved: the confirmation page refuses with the words the API's refusal uses.
    const late = await m.owner.c.get(`${buyerOrder}/approve`);
    expect(late.statusCode).toBe(409);
    expect(late.body).toContain('This order has moved on. Cannot approve the placement: the order is completed.');
    await expectLedgerInvariants(h.database);
    // The API sees what the console did.
    const api = await h.app.inject({ method: 'GET', url: `/api/v1/orders/${id}`, headers: bearer(m.ws.readKey) });
    expect(api.json().data.status).toBe('completed');
    expect(api.json().data.messages.map((x: { body: string }) => x.body)).toEqual(['Looks good.']);
  });

  it('the buyer submits content and cancels; the publisher declines with a reason', async () => {
    const id = await place(m, 1);
    const order = `${m.w}/orders/${id}`;
    const empty = await m.owner.c.post(`${order}/content`, { title: '', body: '', intent: 'submit' }, { from: order });
    expect(empty.statusCode).toBe(422);
    expect(empty.body).toContain('Title is required');
    expect(redirectedTo(await m.owner.c.post(`${order}/content`, { title: 'Our product, reviewed', body: articleFor(TARGET), intent: 'submit' }, { from: order }))).toBe(
      `${order}?done=content`,
    );
    expect(await statusOf(id)).toBe('awaiting_acceptance');
    const confirm = await m.owner.c.get(`${order}/cancel`);
    expect(confirm.body).toContain('Cancel order');
    const before = await kit.balances(m.ws.workspaceId);
    expect(confirm.body).toContain(`<dt>Refund</dt><dd>${usd(m.p.offers[1]!.price)}</dd>`);
    expect(confirm.body).toContain(`<dt>Available balance after</dt><dd>${usd(Number(before.available) + m.p.offers[1]!.price)}</dd>`);
    expect(redirectedTo(await m.owner.c.post(`${order}/cancel`, {}, { from: `${order}/cancel` }))).toBe(`${order}?done=cancelled`);
    expect((await kit.balances(m.ws.workspaceId)).available).toBe(before.available + m.p.offers[1]!.price);

    const other = await place(m, 0);
    const pOrder = `${m.pp}/orders/${other}`;
    const noReason = await m.writer.c.post(`${pOrder}/decline`, { reason: '  ' }, { from: pOrder });
    expect(noReason.statusCode).toBe(422);
    expect(noReason.body).toContain('Reason for declining is required');
    expect(redirectedTo(await m.writer.c.post(`${pOrder}/decline`, { reason: 'Not our topic.' }, { from: pOrder }))).toBe(`${pOrder}?done=declined`);
    expect((await m.owner.c.get(`${m.w}/orders/${other}`)).body).toContain('Not our topic.');
    await expectLedgerInvariants(h.database);
  });

  it('the list filters by state and pages the rest', async () => {
    const list = await m.owner.c.get(`${m.w}/orders?status=cancelled`);
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain('<option value="cancelled" selected>');
    expect(list.body).not.toMatch(/<td>awaiting acceptance<\/td>/);
    expect((await m.owner.c.get(`${m.w}/orders?status=nonsense&page=-1`)).statusCode).toBe(200);
  });
});

describe('Console orders desk (/app/w/{id}/orders and /app/p/{id}/orders): a state that moved on — errors', () => {
  it('a state that moved on answers 409 on the order page, with the order as it is now', async () => {
    const id = await place(m, 0);
    const order = `${m.pp}/orders/${id}`;
    const token = await m.writer.c.token(order);
    // The buyer cancels through the API while the publisher's page is open.
    expect((await kit.buyer(m.ws.spendKey, `${id}/cancel`)).statusCode).toBe(200);
    const res = await h.app.inject({
      method: 'POST',
      url: `${order}/accept`,
      headers: { cookie: [...m.writer.c.jar].map(([k, v]) => `${k}=${v}`).join('; '), 'content-type': 'application/x-www-form-urlencoded' },
      payload: `_csrf=${encodeURIComponent(token)}`,
      remoteAddress: '10.9.0.2',
    });
    expect(res.statusCode).toBe(409);
    expect(res.body).toContain('This order has moved on. Cannot accept: the order is cancelled.');
    expect(res.body).toContain('<dt>State</dt><dd>Cancelled</dd>');
    expect(res.body).not.toMatch(/at .*\.ts:\d+/);
    expect(res.body).not.toContain('>Accept</button>');
    // The confirmation page of an order that cannot be cancelled any more says so too.
    const gone = await m.owner.c.get(`${m.w}/orders/${id}/cancel`);
    expect(gone.statusCode).toBe(409);
    expect(gone.body).toContain('This order has moved on. Cannot cancel: the order is cancelled.');
  });
});

describe('Console orders desk (/app/w/{id}/orders and /app/p/{id}/orders): parties, tokens, roles — security', () => {
  it("another party's order is 404 on every page and action; a publisher's action under a workspace is 404", async () => {
    const id = await place(m, 0);
    const stranger = await market();
    const theirs = [
      ...['', '/approve', '/cancel'].map((s) => ['GET', `${stranger.w}/orders/${id}${s}`] as const),
      ...['content', 'approve-draft', 'approve', 'cancel', 'messages'].map((s) => ['POST', `${stranger.w}/orders/${id}/${s}`] as const),
      ['GET', `${stranger.pp}/orders/${id}`] as const,
      ...['accept', 'decline', 'draft', 'publish', 'recheck', 'messages'].map((s) => ['POST', `${stranger.pp}/orders/${id}/${s}`] as const),
    ];
    for (const [method, url] of theirs) {
      const who = url.startsWith(stranger.w) ? stranger.owner : stranger.writer;
      const home = url.startsWith(stranger.w) ? stranger.w : stranger.pp;
      const res = method === 'GET' ? await who.c.get(url) : await who.c.post(url, { body: 'x', reason: 'x', title: 'x', live_url: `https://${DOMAIN}/x` }, { from: `${home}/orders` });
      expect(res.statusCode, `${method} ${url}`).toBe(404);
    }
    // The order's own parties under the other kind of page: no such page.
    expect((await m.owner.c.post(`${m.w}/orders/${id}/accept`, {}, { from: `${m.w}/orders` })).statusCode).toBe(404);
    expect((await m.writer.c.post(`${m.pp}/orders/${id}/approve`, {}, { from: `${m.pp}/orders` })).statusCode).toBe(404);
    expect((await m.owner.c.get(`${m.w}/orders/0${id}x`)).statusCode).toBe(404);
    // An id no PostgreSQL integer can hold names no order: 404, as the API's 422 names no order either.
    for (const bad of ['0', '3000000000', '99999999999999']) expect((await m.owner.c.get(`${m.w}/orders/${bad}`)).statusCode, bad).toBe(404);
    expect(await statusOf(id)).toBe('awaiting_acceptance');
  });

  it('every form of the desk without its token is 403 and changes nothing', async () => {
    const id = await place(m, 0);
    const posts = [
      ...['accept', 'decline', 'draft', 'publish', 'recheck', 'messages'].map((s) => [m.writer, `${m.pp}/orders/${id}/${s}`] as const),
      ...['content', 'approve-draft', 'approve', 'cancel', 'messages'].map((s) => [m.owner, `${m.w}/orders/${id}/${s}`] as const),
    ];
    for (const [who, url] of posts) {
      const res = await who.c.post(url, { reason: 'x', body: 'x', title: 'x' }, { csrf: false });
      expect(res.statusCode, url).toBe(403);
      expect(res.body).toContain('Form expired');
    }
    expect(await statusOf(id)).toBe('awaiting_acceptance');
    const { rows } = await h.database.pool.query('SELECT count(*)::int AS n FROM order_messages WHERE order_id = $1', [id]);
    expect(rows[0].n).toBe(0);
  });

  it('a viewer reads but cannot act; a member cannot approve a placement (only roles that may spend)', async () => {
    const id = await place(m, 0);
    const viewer = await person('Vic Viewer');
    await addMember(h.database.pool, { workspaceId: m.ws.workspaceId }, viewer.user.id, 'viewer');
    const order = `${m.w}/orders/${id}`;
    const page = await viewer.c.get(order);
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain('Send message');
    expect((await viewer.c.post(`${order}/messages`, { body: 'hi' }, { from: order })).statusCode).toBe(403);

    const member = await person('Mo Member');
    await addMember(h.database.pool, { workspaceId: m.ws.workspaceId }, member.user.id, 'member');
    // Move the order to live_review through the API.
    await kit.pub(m.p.publisherKey, `${id}/accept`);
    await kit.pub(m.p.publisherKey, `${id}/draft`, { title: 'Our product, reviewed', body: articleFor(TARGET) });
    await kit.buyer(m.ws.spendKey, `${id}/approve-draft`);
    pages['/member-post'] = html(`<p><a href="${TARGET}">our product</a></p>`);
    expect((await kit.pub(m.p.publisherKey, `${id}/publish`, { live_url: site.url('/member-post', DOMAIN) })).statusCode).toBe(200);
    const memberPage = await member.c.get(order);
    expect(memberPage.body).toContain("the workspace's owners do it");
    expect(memberPage.body).not.toContain(`${order}/approve"`);
    expect((await member.c.get(`${order}/approve`)).statusCode).toBe(403);
    expect((await member.c.post(`${order}/approve`, {}, { from: order })).statusCode).toBe(403);
    expect(await statusOf(id)).toBe('live_review');
  });

  it('approving as a person: the role is read again inside the paying transaction (a lowered role pays nothing)', async () => {
    const id = await place(m, 1, { content_title: 'Our product, reviewed', content: articleFor(TARGET) });
    await kit.pub(m.p.publisherKey, `${id}/accept`);
    pages['/role-post'] = html(`<p><a href="${TARGET}">our product</a></p>`);
    expect((await kit.pub(m.p.publisherKey, `${id}/publish`, { live_url: site.url('/role-post', DOMAIN) })).statusCode).toBe(200);
    const deps = { pool: h.database.pool, clock: h.clock, durations: durationsFrom(h.config) };
    const unkept = { once: undefined };
    const boss = await person('Bo Owner');
    await addMember(h.database.pool, { workspaceId: m.ws.workspaceId }, boss.user.id, 'owner');
    // The page was opened as an owner; the role is lowered before the click.
    const confirm = await boss.c.get(`${m.w}/orders/${id}/approve`);
    expect(confirm.statusCode).toBe(200);
    await changeRole(h.database.pool, { workspaceId: m.ws.workspaceId }, boss.user.id, 'member');
    await expect(buyerOrders.approve(deps, { workspaceId: m.ws.workspaceId, userId: boss.user.id }, id, unkept)).rejects.toMatchObject({ code: 'forbidden' });
    const stranger = await person('Sy Stranger');
    await expect(buyerOrders.approve(deps, { workspaceId: m.ws.workspaceId, userId: stranger.user.id }, id, unkept)).rejects.toMatchObject({ code: 'not_found' });
    expect(await statusOf(id)).toBe('live_review');
    await expectLedgerInvariants(h.database);
  });
});
