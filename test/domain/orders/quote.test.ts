import { describe, expect, it } from 'vitest';
import { requireAllowed } from '../../../src/domain/orders/action-states.js';
import { quoteMoney } from '../../../src/domain/orders/quote.js';

// The quote's arithmetic (src/domain/orders/quote.ts), which MCP's spending tools and the
// console's confirmation pages render: where the total goes, and the balances after.

const fmt = (c: number) => `$${(c / 100).toFixed(2)}`;
const cents = (q: ReturnType<typeof quoteMoney>) => ({
  total: q.total.cents,
  balance: q.balance.cents,
  balanceAfter: q.balanceAfter.cents,
  shortfall: q.shortfall.cents,
  held: q.held.cents,
  heldAfter: q.heldAfter.cents,
});

describe('quoteMoney — happy', () => {
  it('placing holds the total from the available balance', () => {
    expect(cents(quoteMoney(6_000, { balance: 10_000, held: 500 }, 'hold', fmt))).toEqual({
      total: 6_000, balance: 10_000, balanceAfter: 4_000, shortfall: 0, held: 500, heldAfter: 6_500,
    });
  });

  it('approving pays from what was held: the available balance does not move', () => {
    expect(cents(quoteMoney(6_000, { balance: 100, held: 6_000 }, 'release', fmt))).toEqual({
      total: 6_000, balance: 100, balanceAfter: 100, shortfall: 0, held: 6_000, heldAfter: 0,
    });
  });

  it('cancelling gives the total back to the available balance', () => {
    expect(cents(quoteMoney(6_000, { balance: 100, held: 6_000 }, 'refund', fmt))).toEqual({
      total: 6_000, balance: 100, balanceAfter: 6_100, shortfall: 0, held: 6_000, heldAfter: 0,
    });
  });

  it('each amount comes with its formatted text', () => {
    const q = quoteMoney(18_000, { balance: 10_000, held: 0 }, 'hold', fmt);
    expect([q.total.formatted, q.balanceAfter.formatted, q.shortfall.formatted]).toEqual(['$180.00', '$0.00', '$80.00']);
  });
});

describe('quoteMoney — edges', () => {
  it('a balance too low: never below zero after, the shortfall says what is missing', () => {
    expect(cents(quoteMoney(18_000, { balance: 10_000, held: 0 }, 'hold', fmt))).toMatchObject({ balanceAfter: 0, shortfall: 8_000 });
    expect(cents(quoteMoney(10_000, { balance: 10_000, held: 0 }, 'hold', fmt))).toMatchObject({ balanceAfter: 0, shortfall: 0 });
  });

  it('what is held never goes below zero, even when it read lower than the price', () => {
    expect(cents(quoteMoney(6_000, { balance: 0, held: 1_000 }, 'release', fmt)).heldAfter).toBe(0);
  });
});

describe('requireAllowed — errors', () => {
  it('refuses an action from a state it may not start from, naming the state in words', () => {
    expect(() => requireAllowed('approvePlacement', 'completed')).toThrow('Cannot approve the placement: the order is completed.');
    expect(() => requireAllowed('cancel', 'awaiting_acceptance')).not.toThrow();
    try {
      requireAllowed('submitDraft', 'awaiting_acceptance');
      expect.unreachable();
    } catch (err) {
      expect(err).toMatchObject({ code: 'conflict', message: 'Cannot submit a draft: the order is awaiting acceptance.', details: { status: 'awaiting_acceptance' } });
    }
  });
});
