import { describe, expect, it } from 'vitest';
import { formatCents, usdToCents } from '../../src/domain/money/format.js';

describe('formatCents', () => {
  it('formats US cents exactly, up to the largest balance the ledger holds', () => {
    expect(formatCents(12_000, 'USD', 1)).toBe('$120.00');
    expect(formatCents(-1_205, 'USD', 1)).toBe('-$12.05');
    expect(formatCents(7, 'USD', 1)).toBe('$0.07');
    // A float divided by 100 showed .90 here.
    expect(formatCents(9_007_199_254_240_991, 'USD', 1)).toBe('$90,071,992,542,409.91');
    expect(formatCents(Number.MAX_SAFE_INTEGER, 'USD', 1)).toBe('$90,071,992,547,409.91');
  });

  it('converts by the FX rate into the workspace currency', () => {
    expect(formatCents(10_000, 'EUR', 0.92)).toBe('€92.00');
    expect(formatCents(10_000, 'JPY', 150)).toBe('¥15,000');
  });

  it('reads decimal dollars as cents, rounding half up', () => {
    expect([usdToCents(0.005), usdToCents(1.005), usdToCents(300.015)]).toEqual([1, 101, 30002]);
  });
});
