import { describe, expect, it } from 'vitest';
import { escrow, type Movement, posting, release } from '../../../src/domain/ledger/ledger.js';

// `posting` gives the values of the ledger's part of a caller's statement, `postingWith`
// (placement writes its orders, their escrow and their events in one). It checks movements as `post` does, and
// takes only those between a workspace's own locked rows: a publisher's or the platform's row
// is locked and changed one at a time, in the lock order, by `post` alone.
const w = { workspaceId: 1, available: 10, held: 11, availableBalance: 1_000 };

describe('ledger posting, as part of a caller statement', () => {
  it('escrow: one transaction per order, its entries, and the net change of each balance row', () => {
    const values = posting([escrow(w, { id: 7, price: 300 }), escrow(w, { id: 8, price: 200 })]);
    expect(values).toEqual({
      kinds: ['order_placed', 'order_placed'],
      orderIds: [7, 8],
      workspaceIds: [1, 1],
      ns: [0, 1],
      entryNs: [0, 0, 1, 1],
      entryAccounts: [10, 11, 10, 11],
      entryAmounts: [-300, 300, -200, 200],
      deltaAccounts: [10, 11],
      deltas: [-500, 500],
    });
  });

  it('refuses what post refuses: an unbalanced movement, the same movement twice', () => {
    const unbalanced: Movement = { ...escrow(w, { id: 7, price: 300 }), postings: [{ accountId: 10, kind: 'available', amount: -300 }] };
    expect(() => posting([unbalanced])).toThrow('unbalanced ledger movement order_placed');
    expect(() => posting([escrow(w, { id: 7, price: 300 }), escrow(w, { id: 7, price: 300 })])).toThrow('duplicate ledger movement');
  });

  it("refuses a movement of a publisher's or the platform's accounts", () => {
    const order = { id: 7, price: 300, publisher_price_cents: 250, fee_cents: 50 };
    expect(() => posting([release(w, order, 20, 30)])).toThrow('goes through post');
  });
});
