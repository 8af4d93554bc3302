import { describe, expect, it } from 'vitest';
import { setupApp } from '../helpers/app.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';
import { orderKit } from '../helpers/orders.js';

// No errors or security blocks: bad filters are in routing.test.ts (and at the end of the test below); other workspaces' orders are in orders-errors.test.ts and security.test.ts.

const h = await setupApp();
const kit = orderKit(h);
const p = await publisherWithOutlet(h.database);
const valid = () => ({ offer_ids: [p.offers[0]!.id], target_url: 'https://buyer.example/' });

describe('GET /api/v1/orders — happy', () => {
  it('lists filter by status and your_turn, newest first', async () => {
    const w = await workspaceWithKeys(h.database.pool, { balanceCents: 100_000 });
    const a = (await kit.place(w.spendKey, valid())).json().data[0];
    const b = (await kit.place(w.spendKey, valid())).json().data[0];
    await h.app.inject({ method: 'POST', url: `/api/v1/orders/${a.id}/cancel`, headers: bearer(w.readKey) });
    const all = (await h.app.inject({ method: 'GET', url: '/api/v1/orders', headers: bearer(w.readKey) })).json();
    expect(all.data.map((o: { id: number }) => o.id)).toEqual([b.id, a.id]);
    expect(all.data[0].messages_count).toBe(0);
    const cancelled = (await h.app.inject({ method: 'GET', url: '/api/v1/orders?status=cancelled', headers: bearer(w.readKey) })).json();
    expect(cancelled.data.map((o: { id: number }) => o.id)).toEqual([a.id]);
    const theirTurn = (await h.app.inject({ method: 'GET', url: '/api/v1/orders?your_turn=false', headers: bearer(w.readKey) })).json();
    expect(theirTurn.data.map((o: { id: number }) => o.id)).toEqual([b.id, a.id]);
    const mineRes = await h.app.inject({ method: 'GET', url: '/api/v1/orders?your_turn=true', headers: bearer(w.readKey) });
    expect(mineRes.statusCode, mineRes.body).toBe(200);
    expect(mineRes.json().data).toEqual([]);
    // Each filter shape is its own prepared statement: alternating them on pooled connections must work.
    for (let i = 0; i < 10; i++) {
      for (const q of ['your_turn=true', 'your_turn=false', 'your_turn=1&status=cancelled', 'your_turn=0&status=cancelled']) {
        const r = await h.app.inject({ method: 'GET', url: `/api/v1/orders?${q}`, headers: bearer(w.readKey) });
        expect(r.statusCode, `${q}: ${r.body}`).toBe(200);
      }
    }
    const bad = await h.app.inject({ method: 'GET', url: '/api/v1/orders?status=lost&your_turn=maybe', headers: bearer(w.readKey) });
    expect(Object.keys(bad.json().errors).sort()).toEqual(['status', 'your_turn']);
  });
});
