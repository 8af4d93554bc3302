import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cachedItems, findPurchase, findPurchases } from '../../../src/domain/catalog/catalog-queries.js';
import { createPurchase, refundPurchase } from '../../../src/domain/catalog/catalog-writes.js';
import { setupApp } from '../../helpers/app.js';
import { seller } from './fixtures.js';

// Purchase lookups answered together: one query for several codes must answer each code exactly
// as a lookup of its own would, whatever mix of workspaces, refunds and bad codes it holds.
const h = await setupApp({ RATE_LIMIT_PER_MINUTE: 100_000 });
const a = await seller(h.database);
const b = await seller(h.database);
const extended = (await createPurchase(h.database.pool, { itemId: a.itemIds[4]!, license: 'extended', supportMonths: null })).purchase_code;
const refunded = (await createPurchase(h.database.pool, { itemId: a.itemIds[1]!, license: 'regular', supportMonths: 6 })).purchase_code;
await refundPurchase(h.database.pool, refunded);
// b's purchase of an item no validation has read yet (not cached).
const cold = (await createPurchase(h.database.pool, { itemId: b.itemIds[3]!, license: 'regular', supportMonths: null })).purchase_code;

// Each (workspace, code) pair with what it should find.
const cases: Array<[number, string]> = [
  [a.workspaceId, a.code],
  [a.workspaceId, extended],
  [a.workspaceId, a.code.toUpperCase()],
  [a.workspaceId, b.code], // another seller's sale
  [b.workspaceId, b.code],
  [a.workspaceId, refunded],
  [a.workspaceId, randomUUID()],
  [a.workspaceId, 'not-a-code'],
  [a.workspaceId, a.code], // the same code twice
];

// The test's own item cache (the app has its own, which the validations below fill).
const items = cachedItems(h.database.pool);

afterEach(() => vi.restoreAllMocks());

describe('POST /api/purchases/validation: purchase lookups together — happy', () => {
  it('one query for several codes answers each as its own lookup does', async () => {
    const alone = [];
    for (const [ws, code] of cases) alone.push(await findPurchase(h.database.pool, items, ws, code));
    expect(alone.filter((x) => x !== undefined)).toHaveLength(5);
    const together = await findPurchases(
      h.database.pool,
      items,
      cases.map(([workspaceId, code]) => ({ workspaceId, code })),
    );
    expect(together).toEqual(alone);
  });

  it('concurrent validations are gathered into shared queries, and each gets its own answer', async () => {
    const query = vi.spyOn(h.database.pool, 'query');
    const keyOf = (ws: number) => (ws === a.workspaceId ? a.readKey : b.readKey);
    const validate = (ws: number, code: string) =>
      h.app.inject({ method: 'POST', url: '/api/purchases/validation', payload: { api_key: keyOf(ws), purchase_code: code } });
    const expected = await Promise.all(cases.map(async ([ws, code]) => (await findPurchase(h.database.pool, items, ws, code)) ?? null));
    const many = Array.from({ length: 6 }, () => cases).flat();
    const answers = await Promise.all(many.map(([ws, code]) => validate(ws, code)));
    answers.forEach((res, i) => {
      const want = expected[i % cases.length];
      if (want === null) expect(res.statusCode, `${i}`).toBe(404);
      else {
        expect(res.statusCode, `${i}`).toBe(200);
        expect(res.json().data.purchase).toEqual(want);
      }
    });
    const named = (name: string) => query.mock.calls.filter(([config]) => (config as { name?: string }).name === name).length;
    expect(named('catalog_purchases')).toBeGreaterThan(0);
  });
  it("one request's failing item read fails that request only, not the others it shared a query with", async () => {
    const validate = (key: string, code: string) =>
      h.app.inject({ method: 'POST', url: '/api/purchases/validation', payload: { api_key: key, purchase_code: code } });
    expect((await validate(a.readKey, a.code)).statusCode).toBe(200); // a's item is cached
    const real = h.database.pool.query.bind(h.database.pool) as (...args: unknown[]) => Promise<unknown>;
    // The database is real; only b's item read fails, and the shared queries are slowed so that
    // the validations below gather.
    vi.spyOn(h.database.pool, 'query').mockImplementation(((config: { name?: string; values?: unknown[] }, ...rest: unknown[]) => {
      if (config?.name === 'catalog_item' && config.values?.[0] === b.itemIds[3]) return Promise.reject(new Error('timeout exceeded when trying to connect'));
      if (config?.name === 'catalog_purchase' || config?.name === 'catalog_purchases') return new Promise((r) => setTimeout(r, 50)).then(() => real(config, ...rest));
      return real(config, ...rest);
    }) as never);
    const res = await Promise.all(Array.from({ length: 60 }, (_, i) => (i === 30 ? validate(b.readKey, cold) : validate(a.readKey, a.code))));
    expect(res[30]!.statusCode).toBe(503);
    expect(res.filter((r, i) => i !== 30 && r.statusCode !== 200)).toEqual([]);
  });

  it('an item read is reused for 5 s of the app clock, then read again', async () => {
    const own = cachedItems(h.database.pool, h.clock);
    const itemId = a.itemIds[2]!;
    const before = await own(a.workspaceId, itemId);
    await h.database.pool.query('UPDATE items SET name = $1 WHERE id = $2', [`${before!.name} (renamed)`, itemId]);
    try {
      h.clock.advance(4_000);
      expect((await own(a.workspaceId, itemId))!.name).toBe(before!.name);
      h.clock.advance(1_001);
      expect((await own(a.workspaceId, itemId))!.name).toBe(`${before!.name} (renamed)`);
    } finally {
      await h.database.pool.query('UPDATE items SET name = $1 WHERE id = $2', [before!.name, itemId]);
    }
  });
});
