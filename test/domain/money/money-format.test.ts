import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { formatCents, usdToCents } from '../../../src/domain/money/format.js';

describe('formatCents', () => {
  it('formats US cents exactly, up to the largest balance the ledger holds', () => {
    expect(formatCents(12_000, 'USD', 1)).toBe('$120.00');
    expect(formatCents(-1_205, 'USD', 1)).toBe('-$12.05');
    expect(formatCents(7, 'USD', 1)).toBe('$0.07');
    // A float divided by 100 showed .90 here.
    expect(formatCents(9_007_199_254_240_991, 'USD', 1)).toBe('$90,071,992,542,409.91');
    expect(formatCents(Number.MAX_SAFE_INTEGER, 'USD', 1)).toBe('$90,071,992,547,409.91');
  });

  it('writes exact amounts as Intl does, for every currency of the FX table and any whole number of cents', () => {
    const intl = (cents: number, currency: string) => {
      const abs = Math.abs(cents);
      const decimal = `${cents < 0 ? '-' : ''}${(abs - (abs % 100)) / 100}.${String(abs % 100).padStart(2, '0')}`;
      return new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(decimal as Intl.StringNumericLiteral);
    };
    // JPY has no minor unit: Intl rounds it, and formatCents leaves that to Intl.
    const currencies = ['USD', 'EUR', 'GBP', 'CAD', 'AUD', 'JPY', 'CHF', 'SEK', 'PLN', 'INR'];
    const cents = fc.oneof(fc.integer({ min: -1_000_000, max: 1_000_000 }), fc.maxSafeInteger(), fc.maxSafeNat().map((n) => -n));
    fc.assert(
      fc.property(cents, fc.constantFrom(...currencies), (c, currency) => {
        expect(formatCents(c, currency, 1)).toBe(intl(c, currency));
      }),
      { numRuns: 5_000 },
    );
    expect(formatCents(-1_205, 'EUR', 1)).toBe('-€12.05');
    expect(formatCents(123_456_789, 'CHF', 1)).toBe('CHF\u00a01,234,567.89');
  });

  it('writes exact amounts without calling Intl once it has learnt the currency', () => {
    formatCents(1, 'USD', 1);
    // format is a getter (it returns a bound function), so its reads are what is counted.
    const format = vi.spyOn(Intl.NumberFormat.prototype as unknown as { format: unknown }, 'format', 'get');
    try {
      expect(formatCents(123_456, 'USD', 1)).toBe('$1,234.56');
      expect(format).not.toHaveBeenCalled();
    } finally {
      format.mockRestore();
    }
  });

  it('converts by the FX rate into the workspace currency', () => {
    expect(formatCents(10_000, 'EUR', 0.92)).toBe('€92.00');
    expect(formatCents(10_000, 'JPY', 150)).toBe('¥15,000');
  });

  it('reads decimal dollars as cents, rounding half up', () => {
    expect([usdToCents(0.005), usdToCents(1.005), usdToCents(300.015)]).toEqual([1, 101, 30002]);
  });
});
