import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { buyerOrder } from '../../src/schemas/orders.js';
import { meData } from '../../src/schemas/me.js';
import { setupApp } from '../helpers/app.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';
import { expectLedgerInvariants } from '../helpers/ledger-invariants.js';
import { publisherBalances } from '../helpers/orders.js';
import { articleFor, connect, fails, listen, ok } from './helpers.js';

const h = await setupApp();
const url = await listen(h);

const TOOLS = [
  'get-balance',
  'search-outlets',
  'get-outlet',
  'plan-campaign',
  'place-orders',
  'list-orders',
  'get-order',
  'list-events',
  'submit-content',
  'approve-draft',
  'send-message',
  'approve-placement',
  'get-approval-request',
  'cancel-order',
  'get-ledger',
];
const READS = ['get-balance', 'search-outlets', 'get-outlet', 'plan-campaign', 'list-orders', 'get-order', 'list-events', 'get-approval-request', 'get-ledger'];
const DESTRUCTIVE = ['place-orders', 'approve-placement', 'cancel-order'];

type Order = { id: number; status: string; price: number; your_turn: boolean };
const rest = (key: string, method: 'GET' | 'POST', path: string, payload?: object) =>
  h.app.inject({ method, url: path, headers: bearer(key), ...(payload ? { payload } : {}) });
const pub = (key: string, path: string, payload?: object) => rest(key, 'POST', `/api/v1/publisher/orders/${path}`, payload);

async function balances(workspaceId: number) {
  const { rows } = await h.database.pool.query(`SELECT kind, balance FROM ledger_accounts WHERE workspace_id = $1`, [workspaceId]);
  return Object.fromEntries(rows.map((r) => [r.kind, Number(r.balance)])) as { available: number; held: number };
}

describe('POST /mcp tools/list — happy', () => {
  let tools: Tool[];
  beforeAll(async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    tools = (await (await connect(url, ws.readKey)).listTools()).tools;
  });

  it('lists the fifteen tools', () => {
    expect(tools.map((t) => t.name)).toEqual(TOOLS);
  });

  it('gives each a title, an actionable description and described, object-typed schemas', () => {
    for (const t of tools) {
      expect(t.title, t.name).toBeTruthy();
      expect(t.description?.length, t.name).toBeGreaterThan(150);
      // What to call next: every description names another tool.
      expect(TOOLS.some((other) => other !== t.name && t.description!.includes(other)), `${t.name} names no next tool`).toBe(true);
      expect(t.inputSchema.type, t.name).toBe('object');
      expect(t.outputSchema?.type, t.name).toBe('object');
      expect(t.inputSchema.additionalProperties, `${t.name}: unknown arguments are refused`).toBe(false);
      for (const [field, schema] of Object.entries(t.inputSchema.properties ?? {})) {
        expect((schema as { description?: string }).description, `${t.name}.${field}`).toBeTruthy();
      }
    }
  });

  it('keeps every input and output schema free of type arrays (nullable is an anyOf with {type: "null"})', () => {
    const found: string[] = [];
    let nullables = 0;
    const walk = (node: unknown, path: string): void => {
      if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${path}[${i}]`));
      if (!node || typeof node !== 'object') return;
      const o = node as Record<string, unknown>;
      if ('type' in o && typeof o.type !== 'string' && typeof o.type !== 'object') found.push(`${path}.type`);
      if (Array.isArray(o.type)) found.push(`${path}.type = ${JSON.stringify(o.type)}`);
      if (Array.isArray(o.anyOf) && o.anyOf.some((b) => (b as { type?: unknown }).type === 'null')) nullables++;
      for (const [k, v] of Object.entries(o)) walk(v, `${path}.${k}`);
    };
    for (const t of tools) {
      walk(t.inputSchema, `${t.name}.inputSchema`);
      walk(t.outputSchema, `${t.name}.outputSchema`);
    }
    expect(found).toEqual([]);
    expect(nullables, 'nullable fields are still said to be nullable').toBeGreaterThan(20);
  });

  it('sets all four annotations explicitly', () => {
    for (const t of tools) {
      const a = t.annotations!;
      for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
        expect(typeof a[hint], `${t.name}.${hint}`).toBe('boolean');
      }
      expect(a.readOnlyHint, t.name).toBe(READS.includes(t.name));
      expect(a.destructiveHint, t.name).toBe(DESTRUCTIVE.includes(t.name));
      expect(a.openWorldHint, t.name).toBe(false);
    }
    expect(tools.find((t) => t.name === 'send-message')!.annotations!.idempotentHint).toBe(false);
  });

  it('uses the REST argument names', () => {
    const props = (name: string) => Object.keys(tools.find((t) => t.name === name)!.inputSchema.properties ?? {});
    expect(props('get-outlet')).toEqual(['outlet_id']);
    for (const name of ['get-order', 'submit-content', 'approve-draft', 'send-message', 'cancel-order', 'approve-placement']) {
      expect(props(name), name).toContain('order_id');
    }
    for (const name of ['search-outlets', 'list-orders', 'get-ledger']) expect(props(name), name).toEqual(expect.arrayContaining(['page', 'per_page']));
    expect(props('place-orders')).toEqual(
      expect.arrayContaining(['offer_ids', 'target_url', 'anchor_text', 'brief', 'content', 'content_title', 'project_id', 'confirmation_token']),
    );
    expect(props('plan-campaign')).toEqual(['goal', 'budget_usd', 'audience', 'countries', 'languages', 'formats', 'project_id']);
    expect(props('submit-content')).toEqual(['order_id', 'title', 'body']);
    expect(props('send-message')).toEqual(['order_id', 'body']);
  });

  it('tells the agent to confirm spending with the user', () => {
    for (const name of ['place-orders', 'approve-placement']) {
      const d = tools.find((t) => t.name === name)!.description!;
      expect(d, name).toMatch(/quote/);
      expect(d, name).toMatch(/explicit confirmation|confirm explicitly/);
      expect(d, name).toMatch(/Can place orders/);
    }
  });
});

describe('MCP get-balance, search-outlets, get-outlet and plan-campaign: what REST answers — happy', () => {
  it('get-balance is the data of GET /api/v1/me', async () => {
    const ws = await workspaceWithKeys(h.database.pool, { balanceCents: 54_321 });
    const client = await connect(url, ws.readKey);
    const me = await ok(client, 'get-balance');
    expect(meData.parse(me)).toEqual(me);
    expect(me).toEqual((await rest(ws.readKey, 'GET', '/api/v1/me')).json().data);
    expect(me).toMatchObject({ balance: 54_321, balance_formatted: '$543.21', key: { can_place_orders: false } });
  });

  it('search-outlets and get-outlet', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    const p = await publisherWithOutlet(h.database, [{ publisher_price_cents: 5_000 }, { format: 'link_insertion', publisher_price_cents: 2_000 }]);
    // A search never waits for the index to read a write: this one searches what was just written.
    await h.app.searchEngine.catchUp();
    const client = await connect(url, ws.readKey);
    const found = await ok<{ items: { id: number; from_price: number }[]; meta: Record<string, number> }>(client, 'search-outlets', {
      format: 'link_insertion',
      max_price_usd: 30,
      verified_traffic: true,
      per_page: 100,
    });
    const viaRest = (await rest(ws.readKey, 'GET', '/api/v1/outlets?format=link_insertion&max_price_usd=30&verified_traffic=true&per_page=100')).json();
    expect(found.items).toEqual(viaRest.data);
    expect(found.items.find((i) => i.id === p.outletId)?.from_price).toBe(2_400);
    const { links: _links, path: _path, ...meta } = viaRest.meta;
    expect(found.meta).toEqual(meta);

    const page2 = await ok<{ items: unknown[]; meta: { current_page: number; from: number | null } }>(client, 'search-outlets', { page: 2, per_page: 1 });
    expect(page2.meta.current_page).toBe(2);

    const outlet = await ok<{ outlet: { id: number; offers: { id: number; price: number }[] } }>(client, 'get-outlet', { outlet_id: p.outletId });
    expect(outlet.outlet).toEqual((await rest(ws.readKey, 'GET', `/api/v1/outlets/${p.outletId}`)).json().data);
    expect(outlet.outlet.offers.map((o) => o.price).sort()).toEqual([2_400, 6_000]);
  });

  it('plan-campaign plans and buys nothing', async () => {
    const ws = await workspaceWithKeys(h.database.pool, { balanceCents: 1_000_000 });
    await publisherWithOutlet(h.database, [{ publisher_price_cents: 5_000 }]);
    const client = await connect(url, ws.readKey);
    const args = { goal: 'technology articles for developers', budget_usd: 500 };
    const plan = await ok<{ budget_cents: number; total_cents: number; offer_ids: number[]; items: unknown[]; message: string }>(client, 'plan-campaign', args);
    expect(plan.budget_cents).toBe(50_000);
    expect(plan.total_cents).toBeLessThanOrEqual(50_000);
    expect(plan.offer_ids.length).toBe(plan.items.length);
    const viaRest = (await rest(ws.readKey, 'POST', '/api/v1/plan', args)).json().data;
    expect(plan).toEqual(viaRest);
    expect(await balances(ws.workspaceId)).toEqual({ available: 1_000_000, held: 0 });
  });
});

describe('MCP get-outlet, get-order and the order tools: tool errors — errors', () => {
  it('invalid_input naming each bad argument', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    const client = await connect(url, ws.readKey);
    let body = await fails(client, 'get-order', { order_id: 'abc' }, 'invalid_input');
    expect(body.errors).toEqual({ order_id: ['must be an integer id'] });
    // Beyond every bound of the argument: its own bound's message, once.
    body = await fails(client, 'get-order', { order_id: 1e20 }, 'invalid_input');
    expect(body.errors).toEqual({ order_id: ['must be a positive integer id'] });
    expect(body.message).toContain('order_id');
    body = await fails(client, 'get-order', {}, 'invalid_input');
    expect(Object.keys(body.errors as object)).toEqual(['order_id']);
    body = await fails(client, 'get-outlet', { outlet_id: 1, id: 1 }, 'invalid_input');
    expect(body.errors).toEqual({ id: ['is not an argument of this tool'] });
    body = await fails(client, 'search-outlets', { per_page: 101, type: 'tabloid', max_price_usd: '10' }, 'invalid_input');
    expect(Object.keys(body.errors as object).sort()).toEqual(['max_price_usd', 'per_page', 'type']);
    expect(body.message).toMatch(/per_page/);
    body = await fails(client, 'plan-campaign', { goal: 'x', budget_usd: -1 }, 'invalid_input');
    expect(Object.keys(body.errors as object).sort()).toEqual(['budget_usd', 'goal']);
    body = await fails(client, 'list-orders', { status: 'lost', your_turn: 'yes' }, 'invalid_input');
    expect(Object.keys(body.errors as object).sort()).toEqual(['status', 'your_turn']);
    body = await fails(client, 'send-message', { order_id: 1, body: '' }, 'invalid_input');
    expect(Object.keys(body.errors as object)).toEqual(['body']);
    // Text PostgreSQL cannot store was an internal_error.
    body = await fails(client, 'search-outlets', { q: 'a\u0000' }, 'invalid_input');
    expect(body.errors).toEqual({ q: ['must not contain NUL characters or unpaired UTF-16 surrogates'] });
    // In words, once per problem; and a refusal the domain makes reads like the argument checks.
    body = await fails(client, 'send-message', { order_id: 1, body: 'x'.repeat(5001) }, 'invalid_input');
    expect(body.errors).toEqual({ body: ['must be at most 5,000 characters'] });
    body = await fails(client, 'plan-campaign', { goal: 'a travel app', budget_usd: 0 }, 'invalid_input');
    expect(body.errors).toEqual({ budget_usd: ['must be greater than 0'] });
    // Below a cent once rounded, in both interfaces' words.
    body = await fails(client, 'search-outlets', { max_price_usd: 0.004 }, 'invalid_input');
    expect(body.errors).toEqual({ max_price_usd: ['must be at least 0.01'] });
    const viaRest = (await rest(ws.readKey, 'GET', '/api/v1/outlets?max_price_usd=0.004')).json();
    expect(viaRest.errors).toEqual({ max_price_usd: ['must be at least 0.01'] });
    const spender = await connect(url, ws.spendKey);
    body = await fails(spender, 'place-orders', { offer_ids: [2_000_000_000], target_url: 'https://x.example/' }, 'invalid_input');
    expect(body.message).toBe('Invalid arguments: offer_ids: unknown or inactive offers: 2000000000.');
  });

  it('conflict with the status when the order is not in the right state', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    const p = await publisherWithOutlet(h.database, [{ content_by: 'publisher' }]);
    const placed = await h.app.inject({
      method: 'POST',
      url: '/api/v1/orders',
      headers: { ...bearer(ws.spendKey), 'idempotency-key': 'conflict-1' },
      payload: { offer_ids: [p.offers[0]!.id], target_url: 'https://buyer.example/' },
    });
    const id = placed.json().data[0].id as number;
    const client = await connect(url, ws.spendKey);
    for (const [name, args] of [
      ['approve-draft', { order_id: id }],
      ['submit-content', { order_id: id, title: 'A fine title', body: 'text' }],
      ['approve-placement', { order_id: id }],
    ] as const) {
      const body = await fails(client, name, args, 'conflict');
      expect(body.status, name).toBe('awaiting_acceptance');
    }
  });

  it('answers an unexpected failure with a generic internal_error and logs it server-side', async () => {
    const ws = await workspaceWithKeys(h.database.pool);
    const client = await connect(url, ws.readKey);
    await h.database.pool.query('ALTER TABLE ledger_entries RENAME TO ledger_entries_hidden');
    try {
      const body = await fails(client, 'get-ledger', {}, 'internal_error');
      expect(body.message).not.toMatch(/ledger_entries|relation|does not exist/);
      expect(Object.keys(body).sort()).toEqual(['code', 'message', 'request_id']);
      expect(h.logs.some((l) => l.includes('MCP tool failed') && l.includes(body.request_id) && l.includes('ledger_entries'))).toBe(true);
    } finally {
      await h.database.pool.query('ALTER TABLE ledger_entries_hidden RENAME TO ledger_entries');
    }
    expect((await ok<{ items: unknown[] }>(client, 'get-ledger', {})).items.length).toBeGreaterThan(0);
  });
});

describe('MCP get-order and the order tools: another workspace’s order — security', () => {
  it('not_found for an unknown outlet and for another workspace’s order', async () => {
    const mine = await workspaceWithKeys(h.database.pool);
    const theirs = await workspaceWithKeys(h.database.pool);
    const p = await publisherWithOutlet(h.database);
    const placed = await h.app.inject({
      method: 'POST',
      url: '/api/v1/orders',
      headers: { ...bearer(theirs.spendKey), 'idempotency-key': 'theirs-1' },
      payload: { offer_ids: [p.offers[0]!.id], target_url: 'https://theirs.example/' },
    });
    const theirOrder = placed.json().data[0].id as number;
    const client = await connect(url, mine.spendKey);
    await fails(client, 'get-outlet', { outlet_id: 2_000_000_000 }, 'not_found');
    for (const name of ['get-order', 'approve-draft', 'cancel-order', 'approve-placement']) {
      const body = await fails(client, name, { order_id: theirOrder }, 'not_found');
      expect(JSON.stringify(body), name).not.toContain('theirs.example');
    }
    await fails(client, 'send-message', { order_id: theirOrder, body: 'hi' }, 'not_found');
    await fails(client, 'submit-content', { order_id: theirOrder, title: 'A title', body: 'x' }, 'not_found');
  });
});

describe('MCP search-outlets to approve-placement: a whole order — happy', () => {
  it('walks both content paths with the publisher acting through its REST API', async () => {
    const ws = await workspaceWithKeys(h.database.pool, { balanceCents: 100_000 });
    const p = await publisherWithOutlet(h.database, [
      { content_by: 'buyer', publisher_price_cents: 10_000, title: 'Buyer writes' },
      { content_by: 'publisher', publisher_price_cents: 20_000, title: 'Publisher writes' },
      { content_by: 'buyer', publisher_price_cents: 5_000, format: 'link_insertion', title: 'To cancel' },
    ]);
    const client = await connect(url, ws.spendKey);
    const target = 'https://buyer.example/product';

    // Searchable once the search index has read the new outlet's notification.
    await h.app.searchEngine.catchUp();
    const found = await ok<{ items: { id: number }[] }>(client, 'search-outlets', { per_page: 100 });
    expect(found.items.map((i) => i.id)).toContain(p.outletId);
    const { outlet } = await ok<{ outlet: { offers: { id: number; title: string }[] } }>(client, 'get-outlet', { outlet_id: p.outletId });
    const offer = (title: string) => outlet.offers.find((o) => o.title === title)!.id;

    const args = { offer_ids: [offer('Buyer writes'), offer('Publisher writes'), offer('To cancel')], target_url: target, anchor_text: 'our product' };
    const quote = await ok<{ stage: string; confirmation_token: string; quote: { total_cents: number } }>(client, 'place-orders', args);
    expect(quote).toMatchObject({ stage: 'quote', quote: { total_cents: 42_000 } });
    const done = await ok<{ stage: string; orders: Order[]; replayed: boolean }>(client, 'place-orders', { ...args, confirmation_token: quote.confirmation_token });
    expect(done).toMatchObject({ stage: 'done', replayed: false });
    const [mineToWrite, theirsToWrite, toCancel] = done.orders.map((o) => buyerOrder.parse(o));
    expect(mineToWrite).toMatchObject({ status: 'awaiting_content', your_turn: true, price: 12_000 });
    expect(theirsToWrite).toMatchObject({ status: 'awaiting_acceptance', your_turn: false, price: 24_000 });
    expect(await balances(ws.workspaceId)).toEqual({ available: 58_000, held: 42_000 });
    await expectLedgerInvariants(h.database);

    const waiting = await ok<{ items: Order[]; meta: { total: number } }>(client, 'list-orders', { your_turn: true });
    expect(waiting.items.map((o) => o.id).sort()).toEqual([mineToWrite!.id, toCancel!.id].sort());
    const byStatus = await ok<{ items: Order[] }>(client, 'list-orders', { status: 'awaiting_acceptance' });
    expect(byStatus.items.map((o) => o.id)).toEqual([theirsToWrite!.id]);

    // cancel-order: refunded at once.
    const cancelled = await ok<{ order: Order }>(client, 'cancel-order', { order_id: toCancel!.id });
    expect(cancelled.order.status).toBe('cancelled');
    expect(await balances(ws.workspaceId)).toEqual({ available: 64_000, held: 36_000 });
    await expectLedgerInvariants(h.database);
    await fails(client, 'cancel-order', { order_id: toCancel!.id }, 'conflict');

    // The buyer's own article.
    const submitted = await ok<{ order: { status: string; content: { version: number; checks: { name: string; status: string }[] } } }>(
      client,
      'submit-content',
      { order_id: mineToWrite!.id, title: 'Our product, reviewed', body: articleFor(target) },
    );
    expect(submitted.order.status).toBe('awaiting_acceptance');
    expect(submitted.order.content.checks.find((c) => c.name === 'target_link')?.status).toBe('pass');
    expect((await pub(p.publisherKey, `${mineToWrite!.id}/accept`)).json().data.status).toBe('publishing');

    // The publisher's draft, discussed, then approved.
    expect((await pub(p.publisherKey, `${theirsToWrite!.id}/accept`)).json().data.status).toBe('writing');
    expect((await pub(p.publisherKey, `${theirsToWrite!.id}/draft`, { title: 'A draft by the publisher', body: articleFor(target) })).statusCode).toBe(200);
    const message = await ok<{ message: { id: number; body: string; author: string } }>(client, 'send-message', {
      order_id: theirsToWrite!.id,
      body: 'Please mention the price.',
    });
    expect(message.message).toMatchObject({ body: 'Please mention the price.', author: 'buyer' });
    const draft = await ok<{ order: { status: string; messages: { body: string }[] } }>(client, 'get-order', { order_id: theirsToWrite!.id });
    expect(draft.order.status).toBe('draft_review');
    expect(draft.order.messages.map((m) => m.body)).toEqual(['Please mention the price.']);
    const approvedDraft = await ok<{ order: Order }>(client, 'approve-draft', { order_id: theirsToWrite!.id });
    expect(approvedDraft.order.status).toBe('publishing');

    // Both go live; the buyer approves and pays each through the two steps.
    for (const order of [mineToWrite!, theirsToWrite!]) {
      const live = await pub(p.publisherKey, `${order.id}/publish`, { live_url: `https://${p.domain}/posts/${order.id}` });
      expect(live.json().data.status).toBe('live_review');
      const q = await ok<{ stage: string; confirmation_token: string; quote: Record<string, unknown> }>(client, 'approve-placement', { order_id: order.id });
      expect(q.quote).toMatchObject({ total_cents: order.price, paid_from: 'held', balance: 64_000, balance_after: 64_000, shortfall_cents: 0 });
      const paid = await ok<{ stage: string; order: Order; replayed: boolean }>(client, 'approve-placement', {
        order_id: order.id,
        confirmation_token: q.confirmation_token,
      });
      expect(paid).toMatchObject({ stage: 'done', replayed: false, order: { status: 'completed' } });
      await expectLedgerInvariants(h.database);
    }
    expect(await balances(ws.workspaceId)).toEqual({ available: 64_000, held: 0 });
    expect(await publisherBalances(h.database.pool, p.publisherId)).toEqual({ pending: 30_000, payable: 0 });

    const ledger = await ok<{ items: { kind: string; account: string; amount: number }[]; meta: { total: number } }>(client, 'get-ledger', { per_page: 100 });
    expect(ledger.items.map((e) => e.kind)).toEqual(expect.arrayContaining(['top_up', 'order_placed', 'order_refunded', 'order_released']));
    expect(ledger.items.reduce((s, e) => s + e.amount, 0)).toBe(64_000);
    expect(ledger).toEqual(expect.objectContaining({ items: (await rest(ws.readKey, 'GET', '/api/v1/ledger?per_page=100')).json().data }));
    const page = await ok<{ items: unknown[]; meta: { per_page: number; last_page: number; total: number } }>(client, 'get-ledger', { per_page: 2 });
    expect(page.items).toHaveLength(2);
    expect(page.meta).toMatchObject({ per_page: 2, total: ledger.meta.total, last_page: Math.ceil(ledger.meta.total / 2) });
  });
});
