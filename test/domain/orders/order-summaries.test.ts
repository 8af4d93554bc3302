import { describe, expect, it } from 'vitest';
import { listOrders, listOrderSummaries, type OrderListFilters, type Viewer } from '../../../src/domain/orders/order-read.js';
import type { BuyerOrderView, PublisherOrderView } from '../../../src/domain/orders/order-view.js';
import { setupApp } from '../../helpers/app.js';
import { orderKit } from '../../helpers/orders.js';

// The console's order tables read summaries (listOrderSummaries), not the orders with their
// texts: the same orders, in the same order, with the same totals, as listOrders answers the API.

const h = await setupApp();
const kit = orderKit(h);
const { ws, p } = await kit.setup([{ content_by: 'buyer' }, { content_by: 'publisher' }], 10_000_000);
const [withContent, written] = p.offers;
const ids: number[] = [];
for (let i = 0; i < 8; i++) {
  const offer = i % 2 && i < 7 ? written! : withContent!;
  const body = {
    offer_ids: [offer.id],
    target_url: 'https://buyer.example/summaries',
    anchor_text: 'our product',
    brief: 'b'.repeat(5_000),
    // The last order's content is still to come: the buyer's turn.
    ...(offer === withContent && i < 7 ? { content_title: 'A long article', content: 'An article about [our product](https://buyer.example/summaries). '.repeat(1_000) } : {}),
  };
  const res = await kit.place(ws.spendKey, body);
  if (res.statusCode !== 201) throw new Error(res.body);
  ids.push(res.json().data[0].id);
}
// Some orders move on, so both parties have orders on their turn and on the other's.
const ok = async (res: Promise<{ statusCode: number; body: string }>) => {
  const r = await res;
  if (r.statusCode >= 300) throw new Error(r.body);
};
for (const id of ids.slice(0, 3)) await ok(kit.pub(p.publisherKey, `${id}/accept`));
await ok(kit.buyer(ws.spendKey, `${ids[6]}/cancel`));
// A finished order shows no deadline, whatever its row holds (the view's rule).
await h.database.pool.query('UPDATE orders SET deadline_at = now() WHERE id = $1', [ids[6]]);
// Another buyer and publisher with orders of their own, which the lists above must never show.
const other = await kit.setup();
for (let i = 0; i < 3; i++) await ok(kit.place(other.ws.spendKey, { offer_ids: [other.p.offers[0]!.id], target_url: 'https://other.example/', anchor_text: 'theirs' }));

const buyer: Viewer = { party: 'buyer', workspaceId: ws.workspaceId };
const publisher: Viewer = { party: 'publisher', publisherId: p.publisherId };
const filters: OrderListFilters[] = [{}, { yourTurn: true }, { yourTurn: false }, { status: 'awaiting_acceptance' }, { status: 'awaiting_content', yourTurn: true }, { status: 'cancelled', yourTurn: false }];

describe('listOrderSummaries (the console order tables) — happy', () => {
  for (const viewer of [buyer, publisher]) {
    for (const f of filters) {
      it(`${viewer.party}, ${JSON.stringify(f)}: the orders and total listOrders gives, each summarised from its view`, async () => {
        for (const [page, perPage] of [[1, 50], [1, 2], [2, 2], [9, 2]] as const) {
          const full = await listOrders(h.database.pool, viewer as Viewer & { party: 'buyer' }, f, page, perPage);
          const sums = await listOrderSummaries(h.database.pool, viewer, f, page, perPage);
          expect(sums.total).toBe(full.total);
          expect(sums.items.map((o) => o.id)).toEqual(full.items.map((o) => o.id));
          full.items.forEach((o: BuyerOrderView | PublisherOrderView, i) => {
            expect(sums.items[i]).toEqual({
              id: o.id,
              status: o.status,
              turn: o.turn,
              your_turn: o.your_turn,
              outlet: o.outlet,
              money_formatted: 'price_formatted' in o ? o.price_formatted : o.payout_formatted,
              deadline: Object.values(o.deadlines).find(Boolean) ?? null,
              updated_at: o.updated_at,
            });
          });
        }
      });
    }
  }

  it('covers every case above: orders on each party turn, a finished one, long texts left out', async () => {
    const all = await listOrderSummaries(h.database.pool, buyer, {}, 1, 50);
    expect(all.total).toBe(8);
    expect(new Set(all.items.map((o) => o.turn))).toEqual(new Set(['buyer', 'publisher', null]));
    expect(all.items.some((o) => o.deadline === null) && all.items.some((o) => o.deadline !== null)).toBe(true);
    expect(all.items.find((o) => o.id === ids[6])).toMatchObject({ status: 'cancelled', deadline: null });
    expect(JSON.stringify(all).length).toBeLessThan(5_000);
    expect(JSON.stringify(await listOrders(h.database.pool, buyer as Viewer & { party: 'buyer' }, {}, 1, 50)).length).toBeGreaterThan(100_000);
  });
});

describe('listOrderSummaries (the console order tables) — security', () => {
  it("each buyer and publisher sees its own orders only, never the other tenant's", async () => {
    const mine = new Set(ids);
    for (const viewer of [buyer, publisher]) {
      const list = await listOrderSummaries(h.database.pool, viewer, {}, 1, 50);
      expect(list.items.map((o) => o.id).sort()).toEqual([...mine].sort());
    }
    const theirs = [
      await listOrderSummaries(h.database.pool, { party: 'buyer', workspaceId: other.ws.workspaceId }, {}, 1, 50),
      await listOrderSummaries(h.database.pool, { party: 'publisher', publisherId: other.p.publisherId }, {}, 1, 50),
    ];
    for (const list of theirs) {
      expect(list.total).toBe(3);
      expect(list.items.filter((o) => mine.has(o.id))).toEqual([]);
    }
  });
});
