import { describe, expect, it } from 'vitest';
import { createKey } from '../../src/domain/keys/key-service.js';
import { topUp } from '../../src/domain/ledger/ledger-service.js';
import { addMember } from '../../src/domain/users/memberships.js';
import { createUser } from '../../src/domain/users/user-service.js';
import { setupApp } from '../helpers/app.js';
import { bearer } from '../helpers/fixtures.js';
import { expectLedgerInvariants } from '../helpers/ledger-invariants.js';
import { orderKit } from '../helpers/orders.js';
import { consoleClient } from './helpers.js';

// Approval requests in the console through app.inject, as a browser without JavaScript: an
// agent's key that needs a person asks through the API (202); the list and the navigation's
// count; the request's page (what is bought, who asked, the balance now and after, the expiry);
// an owner approves (the domain's approvalRequests.approve, placing as the key that asked) or
// declines; every refusal a page message or the console's error page. The same flow in Chromium
// is browser-approvals.test.ts.

const TARGET = 'https://buyer.example/app';
const h = await setupApp({ SIGNIN_FAILURES_PER_ADDRESS: 1000, RATE_LIMIT_PER_MINUTE: 1_000_000 });
const kit = orderKit(h);
const pool = h.database.pool;
const password = 'correct horse battery';
let n = 0;

async function person(name: string, workspaceId: number, role: 'owner' | 'member' | 'viewer') {
  n++;
  const email = `approver${n}@example.com`;
  const user = await createUser(pool, { email, name, password });
  await addMember(pool, { workspaceId }, user.id, role);
  const c = consoleClient(h, `10.9.0.${n}`);
  expect((await c.post('/app/sign-in', { email, password })).statusCode).toBe(303);
  return { c, user };
}

/** A workspace whose agent's key ("Research agent") needs a person's approval, its owner, and a publisher's offer. */
async function setup(opts: { balance?: number; price?: number } = {}) {
  const { ws, p } = await kit.setup([{ publisher_price_cents: opts.price ?? 10_000 }], opts.balance ?? 1_000_000);
  const agent = await createKey(pool, { workspaceId: ws.workspaceId, canPlaceOrders: true, name: 'Research agent' });
  await pool.query('UPDATE api_keys SET needs_approval = true WHERE id = $1', [agent.id]);
  const owner = await person(`Olga Owner ${n + 1}`, ws.workspaceId, 'owner');
  return { ws, p, offer: p.offers[0]!, agent, owner, w: `/app/w/${ws.workspaceId}` };
}
type Setup = Awaited<ReturnType<typeof setup>>;

/** The agent asks to place an order: the API answers 202 with the request. */
async function ask(s: Setup, anchor = 'our app') {
  const res = await kit.place(s.agent.key, { offer_ids: [s.offer.id], target_url: TARGET, anchor_text: anchor });
  expect(res.statusCode, res.body).toBe(202);
  return res.json().data as { id: number; approve_url: string; total_formatted: string };
}

/** The hidden fields of a form on the page (its idempotency key), by the form's action's end. */
function formFields(page: string, actionEnd: string): Record<string, string> {
  const start = page.search(new RegExp(`<form method="post" action="[^"]+/${actionEnd}"`));
  if (start < 0) throw new Error(`no ${actionEnd} form on the page`);
  const body = page.slice(start, page.indexOf('</form>', start));
  const out: Record<string, string> = {};
  for (const m of body.matchAll(/<input type="hidden" name="([a-z_]+)" value="([^"]*)">/g)) if (m[1] !== '_csrf') out[m[1]!] = m[2]!;
  return out;
}

const statusOf = async (id: number) => (await pool.query<{ status: string }>('SELECT status FROM approval_requests WHERE id = $1', [id])).rows[0]!.status;
const ordersOf = async (workspaceId: number) =>
  (
    await pool.query<{ id: number; placed_by_key_id: number | null; placed_by_user_id: number | null; approval_request_id: number | null }>(
      'SELECT id, placed_by_key_id, placed_by_user_id, approval_request_id FROM orders WHERE workspace_id = $1 ORDER BY id',
      [workspaceId],
    )
  ).rows;
const apiGet = (key: string, url: string) => h.app.inject({ method: 'GET', url, headers: bearer(key) });
const navLink = (page: string) => /<a href="[^"]+\/approvals"[^>]*>(Approvals[^<]*)<\/a>/.exec(page)?.[1];

describe('Console approval requests (/app/w/{id}/approvals) — happy', () => {
  it('the navigation counts the requests waiting; the list shows them first, in words', async () => {
    const s = await setup();
    expect(navLink((await s.owner.c.get(s.w)).body)).toBe('Approvals');
    const first = await ask(s, 'first');
    const second = await ask(s, 'second');
    const third = await ask(s, 'third');
    await h.app.inject({ method: 'POST', url: `/api/v1/approval-requests/${third.id}/cancel`, headers: bearer(s.ws.readKey) });
    const overview = await s.owner.c.get(s.w);
    expect(navLink(overview.body)).toBe('Approvals (2 waiting)');
    const list = await s.owner.c.get(`${s.w}/approvals`);
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain('aria-current="page">Approvals (2');
    // Waiting ones first (the next to expire first), then the rest.
    const ids = [...list.body.matchAll(/>Request (\d+)</g)].map((m) => Number(m[1]));
    expect(ids).toEqual([first.id, second.id, third.id]);
    expect(list.body).toContain('Waiting for a decision');
    expect(list.body).toContain('Withdrawn by a key');
    expect(list.body).toMatch(/<td>Place an order<\/td><td>Outlet \d+<\/td>/);
    expect(list.body).toContain(first.total_formatted);
    expect(list.body).toContain('API key “Research agent”');
    expect(list.body).toMatch(/Expires <time datetime="[0-9T:-]+Z" title="\d{4}-\d\d-\d\d \d\d:\d\d UTC">in \d+ (hours|days)<\/time>/);
    // Filtered by status.
    const pending = await s.owner.c.get(`${s.w}/approvals?status=cancelled`);
    expect([...pending.body.matchAll(/>Request (\d+)</g)].map((m) => Number(m[1]))).toEqual([third.id]);
    // A publisher account has no approvals.
    const pub = await createUser(pool, { email: `pub${++n}@example.com`, name: 'Pub Person', password });
    await addMember(pool, { publisherId: s.p.publisherId }, pub.id, 'owner');
    const pc = consoleClient(h, `10.9.1.${n}`);
    await pc.post('/app/sign-in', { email: `pub${n}@example.com`, password });
    expect(navLink((await pc.get(`/app/p/${s.p.publisherId}`)).body)).toBeUndefined();
    expect((await pc.get(`/app/p/${s.p.publisherId}/approvals`)).statusCode).toBe(404);
  });

  it('the request page shows what is bought, who asked, the total, the balance now and after, the expiry, and the two buttons', async () => {
    const s = await setup({ balance: 500_000 });
    const req = await ask(s);
    expect(req.approve_url.endsWith(`${s.w}/approvals/${req.id}`)).toBe(true);
    const res = await s.owner.c.get(`${s.w}/approvals/${req.id}`);
    expect(res.statusCode).toBe(200);
    const page = res.body;
    expect(page).toContain('Approve an order on Outlet');
    expect(page).toContain('Offer 1');
    expect(page).toContain(`<code>${TARGET}</code>`);
    expect(page).toContain('our app');
    expect(page).toContain('API key “Research agent”');
    expect(page).toContain('Available balance now');
    expect(page).toContain('$5,000.00');
    expect(page).toContain('Available balance after');
    expect(page).toContain(`$${((500_000 - s.offer.price) / 100).toLocaleString('en-US', { minimumFractionDigits: 2 })}`);
    expect(page).toContain(req.total_formatted);
    expect(page).toMatch(/<dt>Expires<\/dt><dd><time datetime="[0-9T:-]+Z" title="\d{4}-\d\d-\d\d \d\d:\d\d UTC">in \d+ (hours|days)<\/time>/);
    expect(page).toContain('>Approve</button>');
    expect(page).toContain('>Decline</button>');
    expect(page).toContain('<label for="f-reason">Reason for declining (optional)</label>');
    expect(formFields(page, 'approve').idempotency_key).toMatch(/^[0-9a-f-]{36}$/);
    // Showing the page decides nothing.
    expect(await statusOf(req.id)).toBe('pending');
  });

  it('an owner approves: the orders are placed as the key that asked, the page links them, the order page says who approved', async () => {
    const s = await setup();
    const req = await ask(s);
    const url = `${s.w}/approvals/${req.id}`;
    const before = await kit.balances(s.ws.workspaceId);
    const approved = await s.owner.c.post(`${url}/approve`, formFields((await s.owner.c.get(url)).body, 'approve'), { from: url });
    expect(approved.statusCode, approved.body).toBe(303);
    expect(approved.headers.location).toBe(`${url}?done=approved`);
    const [order] = await ordersOf(s.ws.workspaceId);
    expect(order).toMatchObject({ placed_by_key_id: s.agent.id, placed_by_user_id: null, approval_request_id: req.id });
    expect(await statusOf(req.id)).toBe('approved');
    const after = await kit.balances(s.ws.workspaceId);
    expect(Number(before.available) - Number(after.available)).toBe(s.offer.price);

    const page = await s.owner.c.get(String(approved.headers.location));
    expect(page.body).toContain('Approved: the orders below are placed');
    expect(page.body).toContain(`href="${s.w}/orders/${order!.id}">Order ${order!.id}</a>`);
    expect(page.body).toContain(`<dt>Decided by</dt><dd>${s.owner.user.name},`);
    expect(page.body).not.toContain('>Approve</button>');
    expect(navLink(page.body)).toBe('Approvals');
    // The API says the same.
    const api = (await apiGet(s.ws.readKey, `/api/v1/approval-requests/${req.id}`)).json().data;
    expect(api).toMatchObject({ status: 'approved', order_ids: [order!.id], decided_by: { user_id: s.owner.user.id } });

    const orderPage = await s.owner.c.get(`${s.w}/orders/${order!.id}`);
    expect(orderPage.statusCode).toBe(200);
    expect(orderPage.body).toMatch(new RegExp(`Approved by ${s.owner.user.name} <time datetime="[0-9T:-]+Z" title="\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC">just now</time>`));
    expect(orderPage.body).toContain(`href="${url}">approval request ${req.id}</a>`);
    // The publisher's side of the same order does not name the buyer's people.
    const pub = await createUser(pool, { email: `pub${++n}@example.com`, name: 'Pub Person', password });
    await addMember(pool, { publisherId: s.p.publisherId }, pub.id, 'owner');
    const pc = consoleClient(h, `10.9.1.${n}`);
    await pc.post('/app/sign-in', { email: `pub${n}@example.com`, password });
    const pubOrder = await pc.get(`/app/p/${s.p.publisherId}/orders/${order!.id}`);
    expect(pubOrder.statusCode).toBe(200);
    expect(pubOrder.body).not.toContain('Approved by');
    // An order placed without a request says nothing of the kind.
    await pool.query('UPDATE api_keys SET needs_approval = false WHERE id = $1', [s.agent.id]);
    const direct = await kit.place(s.agent.key, { offer_ids: [s.offer.id], target_url: TARGET });
    expect(direct.statusCode).toBe(201);
    expect((await s.owner.c.get(`${s.w}/orders/${direct.json().data[0].id}`)).body).not.toContain('Approved by');
    await expectLedgerInvariants(h.database);
  });

  it('an owner declines with a reason: nothing is placed, the agent reads the reason', async () => {
    const s = await setup();
    const req = await ask(s);
    const url = `${s.w}/approvals/${req.id}`;
    const fields = formFields((await s.owner.c.get(url)).body, 'decline');
    const declined = await s.owner.c.post(`${url}/decline`, { ...fields, reason: 'Too expensive for this quarter.' }, { from: url });
    expect(declined.statusCode, declined.body).toBe(303);
    expect(declined.headers.location).toBe(`${url}?done=declined`);
    const page = await s.owner.c.get(String(declined.headers.location));
    expect(page.body).toContain('Declined: the agent that asked can read your decision.');
    expect(page.body).toContain('Too expensive for this quarter.');
    expect(page.body).toContain('<dd>Declined</dd>');
    expect(await ordersOf(s.ws.workspaceId)).toEqual([]);
    const api = (await apiGet(s.agent.key, `/api/v1/approval-requests/${req.id}`)).json().data;
    expect(api).toMatchObject({ status: 'declined', decline_reason: 'Too expensive for this quarter.' });
    // Without a reason is fine too.
    const other = await ask(s, 'another');
    const otherUrl = `${s.w}/approvals/${other.id}`;
    const plain = await s.owner.c.post(`${otherUrl}/decline`, formFields((await s.owner.c.get(otherUrl)).body, 'decline'), { from: otherUrl });
    expect(plain.statusCode).toBe(303);
    expect((await apiGet(s.agent.key, `/api/v1/approval-requests/${other.id}`)).json().data).toMatchObject({ status: 'declined', decline_reason: null });
  });

  it('a live placement to approve: the page links the live page to check and the order; approving pays from what was held', async () => {
    const s = await setup();
    await pool.query('UPDATE api_keys SET needs_approval = false WHERE id = $1', [s.agent.id]);
    const orderId = await kit.accepted(s.agent.key, s.p.publisherKey, s.offer.id, TARGET);
    await pool.query('UPDATE api_keys SET needs_approval = true WHERE id = $1', [s.agent.id]);
    const live = `https://${s.p.domain}/post`;
    expect((await kit.pub(s.p.publisherKey, `${orderId}/publish`, { live_url: live })).statusCode).toBe(200);
    const asked = await kit.buyer(s.agent.key, `${orderId}/approve`);
    expect(asked.statusCode, asked.body).toBe(202);
    const req = asked.json().data as { id: number };
    const url = `${s.w}/approvals/${req.id}`;
    const page = (await s.owner.c.get(url)).body;
    expect(page).toContain('Approve the placement on Outlet');
    expect(page).toContain('What is paid');
    expect(page).toContain(`<a href="${live}" rel="nofollow noopener noreferrer">${live}</a>`);
    expect(page).toContain(`href="${s.w}/orders/${orderId}">Order ${orderId}</a>`);
    const balance = /<dt>Available balance now<\/dt><dd>([^<]+)</.exec(page)![1];
    expect(page).toContain(`<dt>Available balance after</dt><dd>${balance}</dd>`);
    const res = await s.owner.c.post(`${url}/approve`, formFields(page, 'approve'), { from: url });
    expect(res.statusCode, res.body).toBe(303);
    expect((await s.owner.c.get(String(res.headers.location))).body).toContain('Approved: the publisher is paid and the order is completed.');
    expect((await apiGet(s.ws.readKey, `/api/v1/orders/${orderId}`)).json().data.status).toBe('completed');
    await expectLedgerInvariants(h.database);
  });

  it('the overview’s "Needs your action" lists the requests waiting, each linking to its page', async () => {
    const s = await setup();
    const overview0 = await s.owner.c.get(s.w);
    expect(overview0.body).not.toContain('Approval requests waiting for a decision');
    const req = await ask(s);
    const overview = await s.owner.c.get(s.w);
    const needing = overview.body.slice(overview.body.indexOf('id="needing"'), overview.body.indexOf('id="turn"'));
    expect(needing).toContain('Approval requests waiting for a decision (1)');
    expect(needing).toContain(`<a href="${s.w}/approvals/${req.id}">Request ${req.id}</a>`);
    expect(needing).toContain('API key “Research agent”');
    expect(needing).toContain(req.total_formatted);
  });
});

describe('Console approval requests — refusals said on the page', () => {
  it('a balance that dropped: 402, the domain’s message, the request still waiting; approving after a top-up works', async () => {
    const s = await setup({ balance: 15_000, price: 10_000 });
    const req = await ask(s);
    const url = `${s.w}/approvals/${req.id}`;
    const fields = formFields((await s.owner.c.get(url)).body, 'approve');
    // Another key spends most of the balance meanwhile.
    const other = await createKey(pool, { workspaceId: s.ws.workspaceId, canPlaceOrders: true });
    expect((await kit.place(other.key, { offer_ids: [s.offer.id], target_url: TARGET })).statusCode).toBe(201);
    const page = await s.owner.c.get(url);
    expect(page.body).toContain('The available balance is lower than the total');
    const res = await s.owner.c.post(`${url}/approve`, fields, { from: url });
    expect(res.statusCode).toBe(402);
    expect(res.body).toContain('Nothing was placed. The balance is too low:');
    expect(res.body).toContain('The request is still waiting');
    expect(res.body).toContain('>Approve</button>');
    expect(await statusOf(req.id)).toBe('pending');
    expect((await ordersOf(s.ws.workspaceId)).filter((o) => o.approval_request_id === req.id)).toEqual([]);
    // The refusal was not kept: the same form succeeds once the balance allows it.
    await topUp(pool, s.ws.workspaceId, 100_000);
    const again = await s.owner.c.post(`${url}/approve`, fields, { from: url });
    expect(again.statusCode, again.body).toBe(303);
    expect(await statusOf(req.id)).toBe('approved');
    await expectLedgerInvariants(h.database);
  });

  it('approving twice: the same form sent twice places once; a second decision is a message naming the status', async () => {
    const s = await setup();
    const req = await ask(s);
    const url = `${s.w}/approvals/${req.id}`;
    const page = (await s.owner.c.get(url)).body;
    const fields = formFields(page, 'approve');
    const token = await s.owner.c.token(url);
    const [a, b] = await Promise.all([s.owner.c.post(`${url}/approve`, fields, { token }), s.owner.c.post(`${url}/approve`, fields, { token })]);
    const again = await s.owner.c.post(`${url}/approve`, fields, { from: url });
    for (const res of [a, b, again]) {
      expect(res.statusCode, res.body).toBe(303);
      expect(res.headers.location).toBe(`${url}?done=approved`);
    }
    expect((await ordersOf(s.ws.workspaceId)).length).toBe(1);
    // A form from before the decision (another tab): refused, said on the page as it now is.
    const late = await s.owner.c.post(`${url}/approve`, formFields(page.replace(fields.idempotency_key!, crypto.randomUUID()), 'approve'), { from: url });
    expect(late.statusCode).toBe(409);
    expect(late.body).toContain('Nothing was done: this request is no longer waiting for a decision, it is approved.');
    const decline = await s.owner.c.post(`${url}/decline`, { ...formFields(page, 'decline'), reason: 'no' }, { from: url });
    expect(decline.statusCode).toBe(409);
    expect(decline.body).toContain('it is approved');
    expect((await ordersOf(s.ws.workspaceId)).length).toBe(1);
    expect(await statusOf(req.id)).toBe('approved');
    await expectLedgerInvariants(h.database);
  });

  it('an expired request reads expired, without the buttons, and cannot be approved', async () => {
    const s = await setup();
    const start = h.clock.now();
    // Asked longer ago than APPROVAL_REQUEST_HOURS (72): it is past its time now.
    h.clock.set(start - 73 * 3_600_000);
    let req: Awaited<ReturnType<typeof ask>>;
    try {
      req = await ask(s);
    } finally {
      h.clock.set(start);
    }
    const url = `${s.w}/approvals/${req.id}`;
    const page = await s.owner.c.get(url);
    expect(page.body).toContain('<dd>Expired</dd>');
    expect(page.body).toContain('<dt>Expired</dt>');
    expect(page.body).not.toContain('>Approve</button>');
    expect(navLink(page.body)).toBe('Approvals');
    const res = await s.owner.c.post(`${url}/approve`, { idempotency_key: crypto.randomUUID() }, { from: url });
    expect(res.statusCode).toBe(409);
    expect(res.body).toContain('it is expired');
    expect(await ordersOf(s.ws.workspaceId)).toEqual([]);
  });

  it('a failed approval (the offer gone) shows the failure', async () => {
    const s = await setup();
    const req = await ask(s);
    const url = `${s.w}/approvals/${req.id}`;
    const fields = formFields((await s.owner.c.get(url)).body, 'approve');
    await pool.query('UPDATE offers SET active = false WHERE id = $1', [s.offer.id]);
    const res = await s.owner.c.post(`${url}/approve`, fields, { from: url });
    expect(res.statusCode).toBe(303);
    const page = await s.owner.c.get(String(res.headers.location));
    expect(page.body).toContain('<dd>Failed</dd>');
    expect(page.body).toContain('Approving failed, so nothing was placed or paid:');
    expect(page.body).not.toContain('Approved:');
    expect(await ordersOf(s.ws.workspaceId)).toEqual([]);
  });

  it('a decline reason too long: 422, the reason kept and named', async () => {
    const s = await setup();
    const req = await ask(s);
    const url = `${s.w}/approvals/${req.id}`;
    const fields = formFields((await s.owner.c.get(url)).body, 'decline');
    const res = await s.owner.c.post(`${url}/decline`, { ...fields, reason: 'x'.repeat(1001) }, { from: url });
    expect(res.statusCode).toBe(422);
    expect(res.body).toContain('Nothing was declined: check the reason below.');
    expect(res.body).toMatch(/id="f-reason-error">Reason must be at most 1000 characters/);
    expect(res.body).toContain('x'.repeat(1001));
    // A form without its idempotency key decides nothing either.
    const bare = await s.owner.c.post(`${url}/approve`, {}, { from: url });
    expect(bare.statusCode).toBe(422);
    expect(bare.body).toContain('the form was incomplete');
    expect(await statusOf(req.id)).toBe('pending');
  });
});

describe('Console approval requests — roles, tenants, tokens', () => {
  it('a viewer and a member read the page without the buttons; their posts are 403 and decide nothing', async () => {
    const s = await setup();
    const req = await ask(s);
    const url = `${s.w}/approvals/${req.id}`;
    const fields = formFields((await s.owner.c.get(url)).body, 'approve');
    for (const role of ['viewer', 'member'] as const) {
      const who = await person(`No Spender ${role}`, s.ws.workspaceId, role);
      const page = await who.c.get(url);
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('Offer 1');
      expect(page.body).not.toContain('>Approve</button>');
      expect(page.body).not.toContain('>Decline</button>');
      expect(page.body).toContain("Only the workspace's owners approve or decline");
      expect(navLink(page.body)).toBe('Approvals (1 waiting)');
      expect((await who.c.get(`${s.w}/approvals`)).statusCode).toBe(200);
      const approve = await who.c.post(`${url}/approve`, fields, { from: url });
      expect(approve.statusCode).toBe(403);
      expect(approve.body).toContain('Not allowed');
      expect((await who.c.post(`${url}/decline`, { ...fields, reason: 'no' }, { from: url })).statusCode).toBe(403);
    }
    expect(await statusOf(req.id)).toBe('pending');
    expect(await ordersOf(s.ws.workspaceId)).toEqual([]);
  });

  it('another workspace’s request is 404, page and posts; so is a request id that is not one', async () => {
    const s = await setup();
    const req = await ask(s);
    const other = await setup();
    const mine = `${other.w}/approvals/${req.id}`;
    expect((await other.owner.c.get(mine)).statusCode).toBe(404);
    expect((await other.owner.c.post(`${mine}/approve`, { idempotency_key: crypto.randomUUID() }, { from: `${other.w}/approvals` })).statusCode).toBe(404);
    expect((await other.owner.c.post(`${mine}/decline`, { idempotency_key: crypto.randomUUID() }, { from: `${other.w}/approvals` })).statusCode).toBe(404);
    // The other workspace's own path, for someone who is not a member there.
    const theirs = `${s.w}/approvals/${req.id}`;
    expect((await other.owner.c.get(theirs)).statusCode).toBe(404);
    expect((await other.owner.c.post(`${theirs}/approve`, { idempotency_key: crypto.randomUUID() }, { from: `${other.w}/approvals` })).statusCode).toBe(404);
    for (const bad of ['x1', '0', '3000000000', '99999999999999', '99999999999999999999']) expect((await s.owner.c.get(`${s.w}/approvals/${bad}`)).statusCode, bad).toBe(404);
    expect(await statusOf(req.id)).toBe('pending');
  });

  it('a form without its token is 403 and decides nothing', async () => {
    const s = await setup();
    const req = await ask(s);
    const url = `${s.w}/approvals/${req.id}`;
    const fields = formFields((await s.owner.c.get(url)).body, 'approve');
    const res = await s.owner.c.post(`${url}/approve`, fields, { csrf: false });
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('Form expired');
    expect((await s.owner.c.post(`${url}/decline`, formFields((await s.owner.c.get(url)).body, 'decline'), { csrf: false })).statusCode).toBe(403);
    expect(await statusOf(req.id)).toBe('pending');
  });
});
