import { describe, expect, it } from 'vitest';
import { setupApp } from '../helpers/app.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { workspaceWithKeys } from '../helpers/fixtures.js';
import { expectLedgerInvariants } from '../helpers/ledger-invariants.js';
import { mcpHeaders, rpc } from './helpers.js';

// One MCP server and transport answer every request; clients number their requests on their own,
// so the same JSON-RPC id arrives from many HTTP requests at once.
const h = await setupApp();

type Reply = { jsonrpc: string; id: unknown; result?: { isError?: boolean; structuredContent?: Record<string, unknown>; content: { text: string }[] }; error?: { code: number } };
const call = async (key: string, name: string, args: Record<string, unknown>, id: number | string = 1): Promise<Reply> => {
  const res = await h.app.inject({ method: 'POST', url: '/mcp', headers: mcpHeaders(key), payload: rpc('tools/call', { name, arguments: args }, id as number) });
  expect(res.statusCode).toBe(200);
  return res.json() as Reply;
};

describe('POST /mcp: one server for every request — happy', () => {
  it('gives each HTTP request its own reply when their ids collide', async () => {
    const workspaces = await Promise.all([11_111, 22_222, 33_333, 44_444].map((balanceCents) => workspaceWithKeys(h.database.pool, { balanceCents })));
    const calls = workspaces.flatMap((ws, n) =>
      [1, 1, 'same', 1, 'same'].map(async (id) => ({ n, id, reply: await call(ws.readKey, 'get-balance', {}, id) })),
    );
    for (const { n, id, reply } of await Promise.all(calls)) {
      expect(reply.id).toBe(id);
      expect(reply.result?.structuredContent?.balance).toBe([11_111, 22_222, 33_333, 44_444][n]);
      expect((reply.result?.structuredContent?.workspace as { id: number }).id).toBe(workspaces[n]!.workspaceId);
    }
  });

  it("keeps a tool's error with the request that caused it", async () => {
    const ws = await workspaceWithKeys(h.database.pool, { balanceCents: 5_000 });
    const [bad, good, unknown, alsoGood] = await Promise.all([
      call(ws.readKey, 'get-order', { order_id: 'abc' }),
      call(ws.readKey, 'get-balance', {}),
      call(ws.readKey, 'no-such-tool', {}),
      call(ws.readKey, 'get-balance', {}),
    ]);
    expect(bad.result?.isError).toBe(true);
    expect(JSON.parse(bad.result!.content[0]!.text)).toMatchObject({ code: 'invalid_input', errors: { order_id: ['must be an integer id'] } });
    expect(unknown.error).toMatchObject({ code: -32602 });
    for (const reply of [good, alsoGood]) {
      expect(reply.result?.isError).toBeUndefined();
      expect(reply.result?.structuredContent?.balance).toBe(5_000);
    }
  });

  it('answers other requests while a tool waits, and the waiting one gets its own reply', async () => {
    const buyer = await workspaceWithKeys(h.database.pool, { balanceCents: 100_000 });
    const other = await workspaceWithKeys(h.database.pool, { balanceCents: 7_000 });
    const p = await publisherWithOutlet(h.database, [{ publisher_price_cents: 10_000 }]);
    const args = { offer_ids: p.offers.map((o) => o.id), target_url: 'https://buyer.example/', anchor_text: 'buyer' };
    const quote = await call(buyer.spendKey, 'place-orders', args);
    const token = quote.result!.structuredContent!.confirmation_token as string;

    // Placing needs the buyer's workspace and balance rows, held here until the others are answered.
    const blocker = await h.database.pool.connect();
    let confirmed = false;
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT 1 FROM workspaces WHERE id = $1 FOR UPDATE', [buyer.workspaceId]);
      await blocker.query('SELECT 1 FROM ledger_accounts WHERE workspace_id = $1 FOR UPDATE', [buyer.workspaceId]);
      const slow = call(buyer.spendKey, 'place-orders', { ...args, confirmation_token: token }, 7).then((reply) => {
        confirmed = true;
        return reply;
      });
      const [balance, failed] = await Promise.all([call(other.readKey, 'get-balance', {}, 7), call(other.readKey, 'get-order', {}, 7)]);
      expect(balance).toMatchObject({ id: 7, result: { structuredContent: { balance: 7_000 } } });
      expect(JSON.parse(failed.result!.content[0]!.text)).toMatchObject({ code: 'invalid_input' });
      expect(confirmed).toBe(false);
      await blocker.query('COMMIT');
      const done = await slow;
      expect(done.id).toBe(7);
      expect(done.result?.structuredContent).toMatchObject({ stage: 'done', replayed: false });
      expect(done.result?.structuredContent?.orders).toHaveLength(1);
    } finally {
      await blocker.query('ROLLBACK').catch(() => {});
      blocker.release();
    }
    await expectLedgerInvariants(h.database);
  });

  it('answers a tool call the same with or without _meta (two paths), each reply in its place in a batch', async () => {
    const ws = await workspaceWithKeys(h.database.pool, { balanceCents: 4_321 });
    const meta = { _meta: { progressToken: 'p1' } };
    const batch = [
      rpc('tools/call', { name: 'get-balance', arguments: {} }, 1),
      rpc('tools/call', { name: 'get-balance', arguments: {}, ...meta }, 2),
      rpc('ping', {}, 3),
      rpc('tools/call', { name: 'get-order', arguments: { order_id: 'abc' } }, 4),
      rpc('tools/call', { name: 'get-order', arguments: { order_id: 'abc' }, ...meta }, 5),
      rpc('tools/call', { name: 'no-such-tool', arguments: {} }, 6),
      rpc('tools/call', { name: 'no-such-tool', arguments: {}, ...meta }, 7),
      rpc('tools/call', { name: 'place-orders', arguments: { offer_ids: 'x' } }, 8),
      rpc('tools/call', { name: 'place-orders', arguments: { offer_ids: 'x' }, ...meta }, 9),
    ];
    const res = await h.app.inject({ method: 'POST', url: '/mcp', headers: mcpHeaders(ws.readKey), payload: batch });
    expect(res.statusCode).toBe(200);
    const replies = res.json() as Reply[];
    expect(replies.map((r) => r.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(replies[0]!.result?.structuredContent?.balance).toBe(4_321);
    expect(replies[2]!.result).toEqual({});
    expect(JSON.parse(replies[3]!.result!.content[0]!.text)).toMatchObject({ code: 'invalid_input', errors: { order_id: ['must be an integer id'] } });
    expect(replies[5]!.error).toMatchObject({ code: -32602 });
    // A read-only key is refused a spending tool before its arguments are looked at.
    expect(JSON.parse(replies[7]!.result!.content[0]!.text)).toMatchObject({ code: 'forbidden' });
    for (const [plain, withMeta] of [[0, 1], [3, 4], [5, 6], [7, 8]] as const) {
      const { id: _a, ...a } = replies[plain]!;
      const { id: _b, ...b } = replies[withMeta]!;
      expect(b).toEqual(a);
    }
  });
});
