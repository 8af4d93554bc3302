import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { describe, expect, it } from 'vitest';
import { consoleBaseUrl } from '../../src/config.js';
import { approvalRequests } from '../../src/domain/approvals/decide.js';
import { durationsFrom } from '../../src/domain/orders/states.js';
import { addMember } from '../../src/domain/users/memberships.js';
import { createUser } from '../../src/domain/users/user-service.js';
import { setupApp } from '../helpers/app.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';
import { expectLedgerInvariants } from '../helpers/ledger-invariants.js';
import { publisherBalances } from '../helpers/orders.js';
import { articleFor, connect, fails, listen, ok } from './helpers.js';

// A key whose spending a person must approve (docs/approvals.md), through MCP: the quote says so,
// a confirmation answers approval_pending with the link instead of acting, nothing is spent until
// a person approves in the console (the domain call the console makes), and get-approval-request
// shows the outcome.
const h = await setupApp();
const url = await listen(h);
const pool = h.database.pool;
const approvals = { pool, clock: h.clock, durations: durationsFrom(h.config), baseUrl: consoleBaseUrl(h.config) };
let people = 0;

interface Approval {
  required: boolean;
  reason: string | null;
}
interface Quote {
  stage: 'quote';
  quote: { total_cents: number; approval: Approval };
  confirmation_token: string;
  next_step: string;
}
interface ApprovalRequest {
  id: number;
  status: string;
  action: string;
  total_cents: number;
  items: { offer_id: number; order_id: number | null; live_url: string | null }[];
  approve_url: string;
  order_ids: number[];
}
interface Pending {
  stage: 'approval_pending';
  status: 'approval_pending';
  approval_request: ApprovalRequest;
  approve_url: string;
  next_step: string;
  replayed: boolean;
}
interface Done {
  stage: 'done';
  orders?: { id: number; status: string }[];
  order?: { id: number; status: string };
  replayed: boolean;
}

/** A client that has read tools/list, so the SDK checks every structuredContent against its tool's output schema. */
async function client(key: string): Promise<Client> {
  const c = await connect(url, key);
  await c.listTools();
  return c;
}

async function owner(workspaceId: number) {
  const user = await createUser(pool, { email: `mcp-approver-${++people}-${Date.now()}@example.com`, name: `Approver ${people}`, password: 'correct horse battery' });
  await addMember(pool, { workspaceId }, user.id, 'owner');
  return { workspaceId, userId: user.id };
}

const needsApproval = (keyId: number, on = true) => pool.query('UPDATE api_keys SET needs_approval = $2 WHERE id = $1', [keyId, on]);
const approvalAbove = (workspaceId: number, cents: number | null) =>
  pool.query('UPDATE workspaces SET approval_above_cents = $2 WHERE id = $1', [workspaceId, cents]);

/** Balances, orders, ledger postings and approval requests of a workspace: what spending would change. */
async function state(workspaceId: number) {
  const { rows } = await pool.query(
    `SELECT (SELECT balance FROM ledger_accounts WHERE workspace_id = $1 AND kind = 'available')::int AS available,
            (SELECT balance FROM ledger_accounts WHERE workspace_id = $1 AND kind = 'held')::int AS held,
            (SELECT count(*)::int FROM orders WHERE workspace_id = $1) AS orders,
            (SELECT count(*)::int FROM ledger_transactions t WHERE t.order_id IN (SELECT id FROM orders WHERE workspace_id = $1)) AS postings,
            (SELECT count(*)::int FROM approval_requests WHERE workspace_id = $1) AS requests`,
    [workspaceId],
  );
  return rows[0] as { available: number; held: number; orders: number; postings: number; requests: number };
}

/** A workspace with a spending client, and a publisher's outlet with two offers (120.00 and 60.00, fees included). */
async function setup() {
  const ws = await workspaceWithKeys(pool, { balanceCents: 100_000 });
  const p = await publisherWithOutlet(h.database, [{ publisher_price_cents: 10_000 }, { publisher_price_cents: 5_000, title: 'Cheap' }]);
  const args = { offer_ids: p.offers.map((o) => o.id), target_url: 'https://buyer.example/', anchor_text: 'buyer' };
  return { ws, p, args, client: await client(ws.spendKey) };
}

const confirm = <T>(c: Client, tool: string, args: Record<string, unknown>, token: string) => ok<T>(c, tool, { ...args, confirmation_token: token });

describe('MCP place-orders with a key that needs approval — happy', () => {
  it('quotes that a person must approve; confirming answers approval_pending and spends nothing; a repeat replays it', async () => {
    const { ws, args, client: c } = await setup();
    await needsApproval(ws.spendKeyId);
    const before = await state(ws.workspaceId);

    const q = await ok<Quote>(c, 'place-orders', args);
    expect(q.quote.approval).toEqual({ required: true, reason: 'key_needs_approval' });
    expect(q.next_step).toMatch(/after confirming, a person must approve it in the console/i);
    expect(q.next_step).toMatch(/link/);

    const pending = await confirm<Pending>(c, 'place-orders', args, q.confirmation_token);
    expect(pending).toMatchObject({ stage: 'approval_pending', status: 'approval_pending', replayed: false });
    const request = pending.approval_request;
    expect(request).toMatchObject({ status: 'pending', action: 'place_orders', total_cents: 18_000, order_ids: [] });
    expect(request.items.map((i) => [i.offer_id, i.order_id])).toEqual(args.offer_ids.map((id) => [id, null]));
    expect(pending.approve_url).toBe(request.approve_url);
    expect(pending.approve_url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:\\d+/app/w/${ws.workspaceId}/approvals/${request.id}$`));
    expect(pending.next_step).toContain(pending.approve_url);
    expect(pending.next_step).toMatch(/get-approval-request/);
    expect(pending.next_step).toMatch(/Do not call place-orders again/);
    // No order, no money moved: only the request.
    expect(await state(ws.workspaceId)).toEqual({ ...before, requests: 1 });

    const again = await confirm<Pending>(c, 'place-orders', args, q.confirmation_token);
    expect(again).toEqual({ ...pending, replayed: true });
    expect(await state(ws.workspaceId)).toEqual({ ...before, requests: 1 });
  });

  it('a person approves: get-approval-request shows it approved with the orders, which get-order shows', async () => {
    const { ws, args, client: c } = await setup();
    await needsApproval(ws.spendKeyId);
    const q = await ok<Quote>(c, 'place-orders', args);
    const { approval_request: asked } = await confirm<Pending>(c, 'place-orders', args, q.confirmation_token);

    const read = await client(ws.readKey);
    const waiting = await ok<{ approval_request: ApprovalRequest }>(read, 'get-approval-request', { approval_request_id: asked.id });
    expect(waiting.approval_request).toEqual(asked);

    const approved = await approvalRequests.approve(approvals, await owner(ws.workspaceId), asked.id);
    expect(approved.ok).toBe(true);
    const now = await ok<{ approval_request: ApprovalRequest }>(c, 'get-approval-request', { approval_request_id: asked.id });
    expect(now.approval_request).toMatchObject({ id: asked.id, status: 'approved', approve_url: asked.approve_url });
    expect(now.approval_request.order_ids).toHaveLength(2);
    for (const id of now.approval_request.order_ids) {
      const { order } = await ok<{ order: { id: number; status: string } }>(read, 'get-order', { order_id: id });
      expect(order).toMatchObject({ id, status: 'awaiting_acceptance' });
    }
    expect(await state(ws.workspaceId)).toMatchObject({ available: 82_000, held: 18_000, orders: 2 });

    // The confirmation still replays what it answered: the request as it was, pending.
    const replay = await confirm<Pending>(c, 'place-orders', args, q.confirmation_token);
    expect(replay).toMatchObject({ stage: 'approval_pending', replayed: true, approval_request: { id: asked.id, status: 'pending' } });
    expect(await state(ws.workspaceId)).toMatchObject({ orders: 2 });
    await expectLedgerInvariants(h.database);
  });
});

describe('MCP get-approval-request: another workspace’s request — security', () => {
  it('is not_found, as a request that does not exist', async () => {
    const { ws, args, client: c } = await setup();
    await needsApproval(ws.spendKeyId);
    const q = await ok<Quote>(c, 'place-orders', args);
    const { approval_request: asked } = await confirm<Pending>(c, 'place-orders', args, q.confirmation_token);

    const other = await workspaceWithKeys(pool);
    const stranger = await client(other.readKey);
    const foreign = await fails(stranger, 'get-approval-request', { approval_request_id: asked.id }, 'not_found');
    const missing = await fails(stranger, 'get-approval-request', { approval_request_id: 2_000_000_000 }, 'not_found');
    expect(foreign.message).toBe(missing.message);
    expect(foreign).not.toHaveProperty('approval_request');
    await fails(stranger, 'get-approval-request', { approval_request_id: 'abc' }, 'invalid_input');
  });
});

/** An order placed through MCP (its key not yet needing approval), taken by the publisher to live_review at /live. */
async function liveOrder(c: Client, p: Awaited<ReturnType<typeof setup>>['p'], args: Awaited<ReturnType<typeof setup>>['args']) {
  const single = { ...args, offer_ids: [p.offers[0]!.id] };
  const placed = await ok<Quote>(c, 'place-orders', single);
  const id = (await confirm<Done>(c, 'place-orders', single, placed.confirmation_token)).orders![0]!.id;
  const publisher = (path: string, payload?: object) =>
    h.app.inject({ method: 'POST', url: `/api/v1/publisher/orders/${id}/${path}`, headers: bearer(p.publisherKey), ...(payload ? { payload } : {}) });
  await publisher('accept');
  await publisher('draft', { title: 'A draft by the publisher', body: articleFor('https://buyer.example/', 'buyer') });
  await ok(c, 'approve-draft', { order_id: id });
  await publisher('publish', { live_url: `https://${p.domain}/live` });
  return id;
}

describe('MCP approve-placement with a key that needs approval — happy', () => {
  it('quotes that a person must approve; confirming answers approval_pending (approve_placement) and pays nothing until a person approves', async () => {
    const { ws, p, args, client: c } = await setup();
    const id = await liveOrder(c, p, args);

    expect((await ok<Quote>(c, 'approve-placement', { order_id: id })).quote.approval).toEqual({ required: false, reason: null });
    await needsApproval(ws.spendKeyId);
    const q = await ok<Quote>(c, 'approve-placement', { order_id: id });
    expect(q.quote.approval).toEqual({ required: true, reason: 'key_needs_approval' });
    expect(q.next_step).toMatch(/a person must approve it in the console/);

    const before = await state(ws.workspaceId);
    const pending = await confirm<Pending>(c, 'approve-placement', { order_id: id }, q.confirmation_token);
    expect(pending).toMatchObject({ stage: 'approval_pending', status: 'approval_pending', replayed: false });
    expect(pending.approval_request).toMatchObject({ status: 'pending', action: 'approve_placement', total_cents: 12_000, order_ids: [] });
    expect(pending.approval_request.items).toEqual([expect.objectContaining({ order_id: id, live_url: `https://${p.domain}/live` })]);
    expect(pending.next_step).toMatch(/Do not call approve-placement again/);
    expect(await state(ws.workspaceId)).toEqual({ ...before, requests: 1 });
    expect((await ok<{ order: { status: string } }>(c, 'get-order', { order_id: id })).order.status).toBe('live_review');
    expect(await publisherBalances(pool, p.publisherId)).toEqual({ pending: 0, payable: 0 });
    expect(await confirm<Pending>(c, 'approve-placement', { order_id: id }, q.confirmation_token)).toEqual({ ...pending, replayed: true });

    await approvalRequests.approve(approvals, await owner(ws.workspaceId), pending.approval_request.id);
    const now = await ok<{ approval_request: ApprovalRequest }>(c, 'get-approval-request', { approval_request_id: pending.approval_request.id });
    expect(now.approval_request).toMatchObject({ status: 'approved', order_ids: [id] });
    expect((await ok<{ order: { status: string } }>(c, 'get-order', { order_id: id })).order.status).toBe('completed');
    expect(await publisherBalances(pool, p.publisherId)).toEqual({ pending: 10_000, payable: 0 });
    await expectLedgerInvariants(h.database);
  });
});

describe('MCP approve-placement with a key that needs approval — errors', () => {
  it('a placement live on another page than the quoted one is refused (quote_changed), and no request is made', async () => {
    const { ws, p, args, client: c } = await setup();
    const id = await liveOrder(c, p, args);
    await needsApproval(ws.spendKeyId);
    const q = await ok<Quote>(c, 'approve-placement', { order_id: id });
    // Published again elsewhere since the quote (as after a failed link check).
    await pool.query('UPDATE orders SET live_url = $2 WHERE id = $1', [id, `https://${p.domain}/moved`]);
    await fails(c, 'approve-placement', { order_id: id, confirmation_token: q.confirmation_token }, 'quote_changed');
    expect((await state(ws.workspaceId)).requests).toBe(0);
  });
});

describe('MCP place-orders and the workspace rule approval_above_cents — happy', () => {
  it('above it: the quote says so and confirming answers approval_pending; at it: no approval, and confirming places', async () => {
    const { ws, args, client: c } = await setup();
    expect((await ok<Quote>(c, 'place-orders', args)).quote.approval).toEqual({ required: false, reason: null });

    await approvalAbove(ws.workspaceId, 17_999);
    const above = await ok<Quote>(c, 'place-orders', args);
    expect(above.quote.approval).toEqual({ required: true, reason: 'above_approval_limit' });
    const pending = await confirm<Pending>(c, 'place-orders', args, above.confirmation_token);
    expect(pending).toMatchObject({ stage: 'approval_pending', approval_request: { status: 'pending', action: 'place_orders', total_cents: 18_000 } });
    expect(await state(ws.workspaceId)).toMatchObject({ available: 100_000, held: 0, orders: 0, requests: 1 });

    await approvalAbove(ws.workspaceId, 18_000);
    const at = await ok<Quote>(c, 'place-orders', args);
    expect(at.quote.approval).toEqual({ required: false, reason: null });
    expect(at.next_step).not.toMatch(/a person must approve/);
    const done = await confirm<Done>(c, 'place-orders', args, at.confirmation_token);
    expect(done).toMatchObject({ stage: 'done', replayed: false });
    expect(done.orders).toHaveLength(2);
    expect(await state(ws.workspaceId)).toMatchObject({ available: 82_000, held: 18_000, orders: 2, requests: 1 });
    await expectLedgerInvariants(h.database);
  });
});
