import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { describe, expect, it } from 'vitest';
import { topUp } from '../../src/domain/ledger/ledger-service.js';
import { createKey } from '../../src/domain/keys/key-service.js';
import { setApprovalRules } from '../../src/domain/workspaces/workspace-service.js';
import { setupApp } from '../helpers/app.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';
import { expectLedgerInvariants } from '../helpers/ledger-invariants.js';
import { publisherBalances } from '../helpers/orders.js';
import { articleFor, connect, fails, listen, ok } from './helpers.js';

const h = await setupApp();
const url = await listen(h);
const TEN_MINUTES = 10 * 60_000;

interface Quote {
  stage: 'quote';
  quote: {
    items: { offer_id?: number; order_id?: number; price: number }[];
    total_cents: number;
    balance: number;
    balance_after: number;
    shortfall_cents: number;
    paid_from: string;
    total_cents_formatted: string;
  };
  confirmation_token: string;
  expires_at: string;
  next_step: string;
}
interface Done {
  stage: 'done';
  orders?: { id: number; price: number; status: string }[];
  order?: { id: number; status: string };
  replayed: boolean;
}

async function state(workspaceId: number) {
  const q = (sql: string) => h.database.pool.query(sql, [workspaceId]);
  const [acc, orders, confirmations] = await Promise.all([
    q(`SELECT kind, balance FROM ledger_accounts WHERE workspace_id = $1`),
    q(`SELECT count(*)::int AS n FROM orders WHERE workspace_id = $1`),
    q(`SELECT count(*)::int AS n FROM mcp_confirmations c JOIN api_keys k ON k.id = c.api_key_id WHERE k.workspace_id = $1`),
  ]);
  const b = Object.fromEntries(acc.rows.map((r) => [r.kind, Number(r.balance)]));
  return { available: b.available, held: b.held, orders: orders.rows[0].n as number, confirmations: confirmations.rows[0].n as number };
}

/** A workspace with a spending client and a publisher outlet with two offers (120.00 and 60.00). */
async function setup(balanceCents = 100_000) {
  const ws = await workspaceWithKeys(h.database.pool, { balanceCents });
  const p = await publisherWithOutlet(h.database, [{ publisher_price_cents: 10_000 }, { publisher_price_cents: 5_000, title: 'Cheap' }]);
  const client = await connect(url, ws.spendKey);
  const args = { offer_ids: p.offers.map((o) => o.id), target_url: 'https://buyer.example/', anchor_text: 'buyer' };
  return { ws, p, client, args };
}

const quote = (client: Client, args: Record<string, unknown>) => ok<Quote>(client, 'place-orders', args);
const confirm = (client: Client, args: Record<string, unknown>, token: string) => ok<Done>(client, 'place-orders', { ...args, confirmation_token: token });

describe('MCP place-orders: the quote — happy', () => {
  it('spends nothing and says what confirming would do', async () => {
    const { ws, client, args } = await setup();
    const before = await state(ws.workspaceId);
    const q = await quote(client, args);
    expect(q.stage).toBe('quote');
    expect(q.quote).toMatchObject({
      total_cents: 18_000,
      total_cents_formatted: '$180.00',
      paid_from: 'available',
      balance: 100_000,
      balance_after: 82_000,
      shortfall_cents: 0,
    });
    expect(q.quote.items.map((i) => [i.offer_id, i.price])).toEqual(args.offer_ids.map((id, n) => [id, n === 0 ? 12_000 : 6_000]));
    expect(Date.parse(q.expires_at)).toBe(Math.floor((h.clock.now() + TEN_MINUTES) / 1000) * 1000);
    expect(q.next_step).toMatch(/explicit confirmation/);
    expect(q.confirmation_token).toMatch(/^mcq1\./);
    expect(await state(ws.workspaceId)).toEqual(before);
  });

  it('shows a shortfall instead of failing, and the token works once the balance is topped up', async () => {
    const { ws, client, args } = await setup(10_000);
    const q = await quote(client, args);
    expect(q.quote).toMatchObject({ total_cents: 18_000, balance: 10_000, shortfall_cents: 8_000, balance_after: 0 });
    expect(q.next_step).toMatch(/short/);
    const short = await fails(client, 'place-orders', { ...args, confirmation_token: q.confirmation_token }, 'insufficient_balance');
    expect(short).toMatchObject({ needed_cents: 8_000, needed_formatted: '$80.00', balance: 10_000 });
    expect(await state(ws.workspaceId)).toMatchObject({ available: 10_000, held: 0, orders: 0, confirmations: 0 });
    await topUp(h.database.pool, ws.workspaceId, 8_000);
    const done = await confirm(client, args, q.confirmation_token);
    expect(done.orders).toHaveLength(2);
    expect(await state(ws.workspaceId)).toMatchObject({ available: 0, held: 18_000, orders: 2, confirmations: 1 });
    await expectLedgerInvariants(h.database);
  });
});

describe('MCP place-orders: the quote for a read-only key — security', () => {
  it('refuses a read-only key with forbidden at the quote step, naming "Can place orders"', async () => {
    const { ws, client: spender, args } = await setup();
    const reader = await connect(url, ws.readKey);
    const body = await fails(reader, 'place-orders', args, 'forbidden');
    expect(body.message).toContain('Can place orders');
    // Checked before the arguments, as REST answers 403 before 422.
    await fails(reader, 'place-orders', {}, 'forbidden');
    const q = await quote(spender, args);
    await fails(reader, 'place-orders', { ...args, confirmation_token: q.confirmation_token }, 'forbidden');
    await fails(reader, 'approve-placement', { order_id: 1 }, 'forbidden');
    expect(await state(ws.workspaceId)).toMatchObject({ orders: 0, held: 0 });
  });
});

describe('MCP place-orders: the quote refuses what placement would refuse — errors', () => {
  it('refuses what placement would refuse: unknown offers, another workspace’s project, bad arguments, the approval limit', async () => {
    const { ws, client, args } = await setup();
    let body = await fails(client, 'place-orders', { ...args, offer_ids: [...args.offer_ids, 2_000_000_000] }, 'invalid_input');
    expect(body.errors).toEqual({ offer_ids: ['unknown or inactive offers: 2000000000'] });
    body = await fails(client, 'place-orders', { ...args, project_id: 2_000_000_000 }, 'invalid_input');
    expect(Object.keys(body.errors as object)).toEqual(['project_id']);
    body = await fails(client, 'place-orders', { ...args, target_url: 'ftp://buyer.example/', content: 'Hello' }, 'invalid_input');
    expect(Object.keys(body.errors as object).sort()).toEqual(['content_title', 'target_url']);
    body = await fails(client, 'place-orders', { ...args, offer_ids: [] }, 'invalid_input');
    expect(body.message).toContain('offer_ids');

    const limited = await workspaceWithKeys(h.database.pool, { balanceCents: 100_000 });
    await setApprovalRules(h.database.pool, limited.workspaceId, { maxOrderCents: 15_000 });
    const limitedClient = await connect(url, limited.spendKey);
    body = await fails(limitedClient, 'place-orders', args, 'approval_required');
    expect(body).toMatchObject({ total_cents: 18_000, max_order_cents: 15_000 });
    expect(await state(ws.workspaceId)).toMatchObject({ orders: 0 });
  });
});

describe('MCP place-orders: confirming — happy', () => {
  it('places the orders once; the same token and arguments replay the stored result', async () => {
    const { ws, client, args } = await setup();
    const q = await quote(client, args);
    const done = await confirm(client, args, q.confirmation_token);
    expect(done).toMatchObject({ stage: 'done', replayed: false });
    expect(done.orders!.map((o) => o.price)).toEqual([12_000, 6_000]);
    const after = await state(ws.workspaceId);
    expect(after).toEqual({ available: 82_000, held: 18_000, orders: 2, confirmations: 1 });
    await expectLedgerInvariants(h.database);

    const again = await confirm(client, args, q.confirmation_token);
    expect(again).toEqual({ ...done, replayed: true });
    // The same JSON, key order included (only `replayed` differs).
    expect(JSON.stringify(again)).toBe(JSON.stringify({ ...done, replayed: true }));
    // Argument order does not matter: the arguments are compared canonically.
    const reordered = Object.fromEntries(Object.entries({ ...args, confirmation_token: q.confirmation_token }).reverse());
    expect(await ok<Done>(client, 'place-orders', reordered)).toEqual({ ...done, replayed: true });
    expect(await state(ws.workspaceId)).toEqual(after);

    // Even once expired, a used token replays rather than failing.
    h.clock.advance(TEN_MINUTES + 1_000);
    expect(await confirm(client, args, q.confirmation_token)).toEqual({ ...done, replayed: true });
    expect(await state(ws.workspaceId)).toEqual(after);
  });

  it('spends once when the same token is confirmed concurrently', async () => {
    const { ws, client, args } = await setup();
    const q = await quote(client, args);
    const other = await connect(url, ws.spendKey);
    const results = await Promise.all([confirm(client, args, q.confirmation_token), confirm(other, args, q.confirmation_token), confirm(client, args, q.confirmation_token)]);
    expect(results.filter((r) => !r.replayed)).toHaveLength(1);
    for (const r of results) expect(r.orders).toEqual(results[0]!.orders);
    expect(await state(ws.workspaceId)).toEqual({ available: 82_000, held: 18_000, orders: 2, confirmations: 1 });
    await expectLedgerInvariants(h.database);
  });

  it('accepts on a second app instance on the same database a token minted by the first', async () => {
    const { ws, client, args } = await setup();
    const second = await setupApp({}, { database: h.database });
    const otherClient = await connect(await listen(second), ws.spendKey);
    const q = await quote(client, args);
    const done = await confirm(otherClient, args, q.confirmation_token);
    expect(done.replayed).toBe(false);
    expect(await confirm(client, args, q.confirmation_token)).toEqual({ ...done, replayed: true });
    expect(await state(ws.workspaceId)).toMatchObject({ orders: 2, held: 18_000 });
  });
});

describe('MCP place-orders: confirming with a wrong token — security', () => {
  describe('refuses every wrong token and spends nothing', () => {
    const refused = async (client: Client, toolArgs: Record<string, unknown>, reason: RegExp, workspaceId: number) => {
      const before = await state(workspaceId);
      const body = await fails(client, 'place-orders', toolArgs, 'invalid_input');
      expect(Object.keys(body.errors as object)).toEqual(['confirmation_token']);
      expect((body.errors as Record<string, string[]>).confirmation_token![0]).toMatch(reason);
      expect(body.message).toMatch(/Nothing was spent/);
      expect(await state(workspaceId)).toEqual(before);
    };

    it('tampered or forged', async () => {
      const { ws, client, args } = await setup();
      const { confirmation_token: token } = await quote(client, args);
      const [v, payload, sig] = token.split('.') as [string, string, string];
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
      const cheaper = Buffer.from(JSON.stringify({ ...claims, totalCents: 1 })).toString('base64url');
      const flipped = sig.slice(0, -2) + (sig.at(-2) === 'A' ? 'B' : 'A') + sig.at(-1);
      // Other spellings of the same signature bytes: padding, and the unused low bits of the last
      // character (a 32-byte signature leaves two).
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
      const lowBits = sig.slice(0, -1) + alphabet[alphabet.indexOf(sig.at(-1)!) ^ 1];
      expect(Buffer.from(lowBits, 'base64url')).toEqual(Buffer.from(sig, 'base64url'));
      expect(Buffer.from(`${sig}=`, 'base64url')).toEqual(Buffer.from(sig, 'base64url'));
      for (const bad of [
        `${v}.${cheaper}.${sig}`,
        `${v}.${payload}.${flipped}`,
        `${v}.${payload}.${sig}=`,
        `${v}.${payload}.${lowBits}`,
        `${v}.${payload}`,
        'not-a-token',
        `mcq2.${payload}.${sig}`,
      ]) {
        await refused(client, { ...args, confirmation_token: bad }, /not a token this server issued|altered/, ws.workspaceId);
      }
    });

    it('other arguments', async () => {
      const { ws, client, args } = await setup();
      const { confirmation_token } = await quote(client, args);
      for (const other of [
        { ...args, target_url: 'https://elsewhere.example/' },
        { ...args, offer_ids: [...args.offer_ids].reverse() },
        { ...args, offer_ids: args.offer_ids.slice(0, 1) },
        { ...args, brief: 'Also this' },
      ]) {
        await refused(client, { ...other, confirmation_token }, /other arguments/, ws.workspaceId);
      }
      // Still unused: the quoted call itself goes through.
      expect((await confirm(client, args, confirmation_token)).replayed).toBe(false);
    });

    it('another key, even of the same workspace, or another tool', async () => {
      const { ws, client, args } = await setup();
      const { confirmation_token } = await quote(client, args);
      const second = await createKey(h.database.pool, { workspaceId: ws.workspaceId, canPlaceOrders: true });
      await refused(await connect(url, second.key), { ...args, confirmation_token }, /another API key/, ws.workspaceId);
      const body = await fails(client, 'approve-placement', { order_id: 1, confirmation_token }, 'invalid_input');
      expect((body.errors as Record<string, string[]>).confirmation_token![0]).toMatch(/issued for place-orders/);
    });

    it('expired (10 minutes, by the injected clock)', async () => {
      const { ws, client, args } = await setup();
      const { confirmation_token } = await quote(client, args);
      h.clock.advance(TEN_MINUTES);
      await refused(client, { ...args, confirmation_token }, /expired/, ws.workspaceId);
    });

    it('a total that changed since the quote (quote_changed), checked inside the spending transaction', async () => {
      const { ws, p, client, args } = await setup();
      const { confirmation_token } = await quote(client, args);
      const raise = (by: number) =>
        h.database.pool.query('UPDATE offers SET publisher_price_cents = publisher_price_cents + $2 WHERE id = $1', [p.offers[1]!.id, by]);
      await raise(500);
      try {
        const before = await state(ws.workspaceId);
        const body = await fails(client, 'place-orders', { ...args, confirmation_token }, 'quote_changed');
        expect(body).toMatchObject({ quoted_total_cents: 18_000, total_cents: 18_500 });
        expect(body.message).toMatch(/\$180\.00.*\$185\.00/);
        expect(await state(ws.workspaceId)).toEqual(before);
        await expectLedgerInvariants(h.database);
      } finally {
        await raise(-500);
      }
      // The refused attempt left the token unused.
      expect((await confirm(client, args, confirmation_token)).replayed).toBe(false);
    });

    it('a changed total is quote_changed even when the balance no longer covers it (not a shortfall on a price never shown)', async () => {
      const { ws, p, client, args } = await setup(20_000); // covers the $180.00 quoted
      const { confirmation_token } = await quote(client, args);
      await h.database.pool.query('UPDATE offers SET publisher_price_cents = publisher_price_cents + 10000 WHERE id = $1', [p.offers[1]!.id]);
      const before = await state(ws.workspaceId);
      const body = await fails(client, 'place-orders', { ...args, confirmation_token }, 'quote_changed');
      expect(body.quoted_total_cents).toBe(18_000);
      expect(body.total_cents).toBeGreaterThan(20_000);
      expect(await state(ws.workspaceId)).toEqual(before);
    });

    it('a changed total is quote_changed even when it is now above the approval limit', async () => {
      const { ws, p, client, args } = await setup();
      await setApprovalRules(h.database.pool, ws.workspaceId, { maxOrderCents: 20_000 }); // the $180.00 quoted is within it
      const { confirmation_token } = await quote(client, args);
      await h.database.pool.query('UPDATE offers SET publisher_price_cents = publisher_price_cents + 10000 WHERE id = $1', [p.offers[1]!.id]);
      const body = await fails(client, 'place-orders', { ...args, confirmation_token }, 'quote_changed');
      expect(body.quoted_total_cents).toBe(18_000);
      expect(body.total_cents).toBeGreaterThan(20_000);
    });
  });
});

describe('MCP approve-placement', () => {
  async function liveOrder() {
    const { ws, p, client, args } = await setup();
    const q = await quote(client, { ...args, offer_ids: [p.offers[0]!.id] });
    const { orders } = await confirm(client, { ...args, offer_ids: [p.offers[0]!.id] }, q.confirmation_token);
    const id = orders![0]!.id;
    const publisher = (path: string, payload?: object) =>
      h.app.inject({ method: 'POST', url: `/api/v1/publisher/orders/${id}/${path}`, headers: bearer(p.publisherKey), ...(payload ? { payload } : {}) });
    return { ws, p, client, id, publisher };
  }

  /** An order taken to live_review: accepted, drafted by the publisher, draft approved, published at /live. */
  async function liveReviewOrder() {
    const o = await liveOrder();
    await o.publisher('accept');
    await o.publisher('draft', { title: 'A draft by the publisher', body: articleFor('https://buyer.example/', 'buyer') });
    await ok(o.client, 'approve-draft', { order_id: o.id });
    await o.publisher('publish', { live_url: `https://${o.p.domain}/live` });
    return o;
  }

  describe('a live placement, paid once — happy', () => {
    it('quotes nothing but a live placement (409 with the status), then pays the publisher once', async () => {
      const { ws, p, client, id, publisher } = await liveOrder();
      expect((await fails(client, 'approve-placement', { order_id: id }, 'conflict')).status).toBe('awaiting_acceptance');
      await publisher('accept');
      await publisher('draft', { title: 'A draft by the publisher', body: articleFor('https://buyer.example/', 'buyer') });
      await ok(client, 'approve-draft', { order_id: id });
      await publisher('publish', { live_url: `https://${p.domain}/live` });

      const before = await state(ws.workspaceId);
      const q = await ok<Quote>(client, 'approve-placement', { order_id: id });
      expect(q.quote).toMatchObject({ total_cents: 12_000, paid_from: 'held', balance: before.available, balance_after: before.available, shortfall_cents: 0 });
      expect(q.quote.items).toEqual([expect.objectContaining({ order_id: id, live_url: `https://${p.domain}/live`, price: 12_000 })]);
      expect(await state(ws.workspaceId)).toEqual(before);

      await fails(client, 'approve-placement', { order_id: id + 1, confirmation_token: q.confirmation_token }, 'invalid_input');
      const done = await ok<Done>(client, 'approve-placement', { order_id: id, confirmation_token: q.confirmation_token });
      expect(done).toMatchObject({ stage: 'done', replayed: false, order: { id, status: 'completed' } });
      expect(await state(ws.workspaceId)).toMatchObject({ available: before.available, held: before.held - 12_000 });
      // Paid into pending: payable waits for the end of the link guarantee.
      const paid = () => publisherBalances(h.database.pool, p.publisherId);
      expect(await paid()).toEqual({ pending: 10_000, payable: 0 });

      const again = await ok<Done>(client, 'approve-placement', { order_id: id, confirmation_token: q.confirmation_token });
      expect(again).toEqual({ ...done, replayed: true });
      expect(await paid()).toEqual({ pending: 10_000, payable: 0 });
      await expectLedgerInvariants(h.database);
      // A new quote for a completed order: the order has moved on.
      expect((await fails(client, 'approve-placement', { order_id: id }, 'conflict')).status).toBe('completed');
    });
  });

  describe('a placement live on another page than the quoted one — unhappy', () => {
    it('refuses the old quote (quote_changed), pays nothing, and a new quote of the new page pays', async () => {
      const { ws, p, client, id } = await liveReviewOrder();
      const q = await ok<Quote>(client, 'approve-placement', { order_id: id });
      // As when the review deadline sends a failed placement back and the publisher publishes
      // again at another page, within the quote's ten minutes.
      await h.database.pool.query('UPDATE orders SET live_url = $2 WHERE id = $1', [id, `https://${p.domain}/elsewhere`]);
      const before = await state(ws.workspaceId);
      const body = await fails(client, 'approve-placement', { order_id: id, confirmation_token: q.confirmation_token }, 'quote_changed');
      expect(body).toMatchObject({ quoted_live_url: `https://${p.domain}/live`, live_url: `https://${p.domain}/elsewhere` });
      expect((await h.database.pool.query('SELECT status FROM orders WHERE id = $1', [id])).rows[0].status).toBe('live_review');
      expect(await state(ws.workspaceId)).toEqual(before);
      expect(await publisherBalances(h.database.pool, p.publisherId)).toEqual({ pending: 0, payable: 0 });

      const fresh = await ok<Quote>(client, 'approve-placement', { order_id: id });
      expect(fresh.quote.items[0]).toMatchObject({ live_url: `https://${p.domain}/elsewhere` });
      const done = await ok<Done>(client, 'approve-placement', { order_id: id, confirmation_token: fresh.confirmation_token });
      expect(done).toMatchObject({ stage: 'done', order: { id, status: 'completed' } });
      await expectLedgerInvariants(h.database);
    });
  });

  describe('a key revoked after the quote — security', () => {
    it('re-checks the key inside the spending transaction (revoked after the quote)', async () => {
      const { ws, p, client, id } = await liveReviewOrder();
      const q = await ok<Quote>(client, 'approve-placement', { order_id: id });
      await h.database.pool.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [ws.spendKeyId]);
      // The key cache still knows the key (up to 5 s); the spending transaction does not.
      await fails(client, 'approve-placement', { order_id: id, confirmation_token: q.confirmation_token }, 'unauthenticated');
      expect((await h.database.pool.query('SELECT status FROM orders WHERE id = $1', [id])).rows[0].status).toBe('live_review');
      await expectLedgerInvariants(h.database);
    });
  });
});
