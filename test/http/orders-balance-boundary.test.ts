import { describe, expect, it } from 'vitest';
import { setupApp } from '../helpers/app.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';
import { expectLedgerInvariants } from '../helpers/ledger-invariants.js';
import { articleFor, connect, fails, listen, ok } from '../mcp/helpers.js';

// The balance comparison at its edge: a balance one cent short of the total is refused with
// `needed_cents: 1` and writes nothing; a balance of exactly the total places the orders. Both
// adapters (REST and MCP), with and without the buyer's content.
const h = await setupApp();
const url = await listen(h);
const TARGET = 'https://buyer.example/';
let seq = 0;

/** Two offers, so the total is a sum; a workspace whose balance is the total plus `delta`. */
async function setup(delta: number) {
  const p = await publisherWithOutlet(h.database, [{ publisher_price_cents: 10_000 }, { publisher_price_cents: 5_000, title: 'Cheap' }]);
  const total = p.offers.reduce((s, o) => s + o.price, 0);
  const ws = await workspaceWithKeys(h.database.pool, { balanceCents: total + delta });
  return { p, ws, total, args: { offer_ids: p.offers.map((o) => o.id), target_url: TARGET, anchor_text: 'our product' } };
}

const withContent = { content: articleFor(TARGET), content_title: 'A useful article for the boundary' };

async function written(workspaceId: number) {
  const q = async (sql: string) => (await h.database.pool.query(sql, [workspaceId])).rows;
  const [balances, orders, contents, entries] = await Promise.all([
    q(`SELECT kind, balance FROM ledger_accounts WHERE workspace_id = $1 ORDER BY kind`),
    q(`SELECT count(*)::int AS n FROM orders WHERE workspace_id = $1`),
    q(`SELECT count(*)::int AS n FROM order_contents c JOIN orders o ON o.id = c.order_id WHERE o.workspace_id = $1`),
    q(`SELECT count(*)::int AS n FROM ledger_entries e JOIN ledger_accounts a ON a.id = e.account_id WHERE a.workspace_id = $1`),
  ]);
  return {
    balances: Object.fromEntries(balances.map((r) => [r.kind, Number(r.balance)])),
    orders: orders[0].n as number,
    contents: contents[0].n as number,
    entries: entries[0].n as number,
  };
}

const cases = [
  { name: 'without content', extra: {} },
  { name: 'with content', extra: withContent },
];

describe.each(cases)('POST /api/v1/orders at the balance boundary, $name', ({ extra }) => {
  const place = (key: string, body: object) =>
    h.app.inject({ method: 'POST', url: '/api/v1/orders', headers: { ...bearer(key), 'idempotency-key': `edge-${++seq}` }, payload: body });

  describe('one cent short — errors', () => {
    it('one cent short: 402 with needed_cents 1, and nothing written', async () => {
      const { ws, total, args } = await setup(-1);
      const before = await written(ws.workspaceId);
      const res = await place(ws.spendKey, { ...args, ...extra });
      expect(res.statusCode, res.body).toBe(402);
      expect(res.json()).toMatchObject({ code: 'insufficient_balance', needed_cents: 1, balance: total - 1 });
      expect(await written(ws.workspaceId)).toEqual(before);
      expect(before).toMatchObject({ balances: { available: total - 1, held: 0 }, orders: 0, contents: 0 });
      await expectLedgerInvariants(h.database);
    });
  });

  describe('exactly enough — happy', () => {
    it('exactly enough: 201, the whole balance in escrow', async () => {
      const { ws, total, args } = await setup(0);
      const res = await place(ws.spendKey, { ...args, ...extra });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().data).toHaveLength(2);
      expect(await written(ws.workspaceId)).toMatchObject({
        balances: { available: 0, held: total },
        orders: 2,
        contents: 'content' in extra ? 2 : 0,
      });
      await expectLedgerInvariants(h.database);
    });
  });
});

describe.each(cases)('MCP place-orders at the balance boundary, $name', ({ extra }) => {
  const confirmWith = async (key: string, args: Record<string, unknown>) => {
    const client = await connect(url, key);
    const q = await ok<{ confirmation_token: string; quote: { shortfall_cents: number } }>(client, 'place-orders', args);
    return { client, token: q.confirmation_token, shortfall: q.quote.shortfall_cents };
  };

  describe('one cent short — errors', () => {
    it('one cent short: insufficient_balance with needed_cents 1, and nothing written', async () => {
      const { ws, total, args } = await setup(-1);
      const full = { ...args, ...extra };
      const { client, token, shortfall } = await confirmWith(ws.spendKey, full);
      expect(shortfall).toBe(1);
      const before = await written(ws.workspaceId);
      const body = await fails(client, 'place-orders', { ...full, confirmation_token: token }, 'insufficient_balance');
      expect(body).toMatchObject({ needed_cents: 1, balance: total - 1 });
      expect(await written(ws.workspaceId)).toEqual(before);
      expect(before).toMatchObject({ balances: { available: total - 1, held: 0 }, orders: 0, contents: 0 });
      await expectLedgerInvariants(h.database);
    });
  });

  describe('exactly enough — happy', () => {
    it('exactly enough: done, the whole balance in escrow', async () => {
      const { ws, total, args } = await setup(0);
      const full = { ...args, ...extra };
      const { client, token, shortfall } = await confirmWith(ws.spendKey, full);
      expect(shortfall).toBe(0);
      const done = await ok<{ stage: string; orders: unknown[]; replayed: boolean }>(client, 'place-orders', { ...full, confirmation_token: token });
      expect(done).toMatchObject({ stage: 'done', replayed: false });
      expect(done.orders).toHaveLength(2);
      expect(await written(ws.workspaceId)).toMatchObject({
        balances: { available: 0, held: total },
        orders: 2,
        contents: 'content' in extra ? 2 : 0,
      });
      await expectLedgerInvariants(h.database);
    });
  });
});
