import { describe, expect, it } from 'vitest';
import { optionalUsdLimit, usdLimit } from '../../src/schemas/key-budget.js';
import { topUpRequestForm } from '../../src/schemas/top-ups.js';
import { typedUsd, typedUsdCents } from '../../src/schemas/usd.js';

// One rule for an amount a person types (console forms, CLI flags): commas only between
// thousands, any decimals rounded half up to the cent, as the API's *_usd inputs.
describe('typed US dollars', () => {
  const dollars = typedUsd('bad');
  it('reads plain, decimal and thousands-separated amounts', () => {
    for (const [text, usd] of [['250', 250], [' 250.5 ', 250.5], ['1,250.50', 1250.5], ['12,345,678', 12_345_678], ['0', 0], ['0.015', 0.015]] as const) {
      expect(dollars.parse(text), text).toBe(usd);
    }
    expect(typedUsdCents('bad').parse('0.015')).toBe(2);
    expect(typedUsdCents('bad').parse('12.345')).toBe(1_235);
  });

  it('refuses what is not an amount, with the field\'s own message', () => {
    for (const text of ['', '1,25', '12,3456', ',100', '1,000,', '$5', '-5', '1e3', '5.', '.5', 'NaN', 'lots']) {
      const r = dollars.safeParse(text);
      expect(r.success, text).toBe(false);
      expect(r.error?.issues[0]?.message, text).toBe('bad');
    }
  });

  it('every form that takes an amount reads it the same way', () => {
    expect(topUpRequestForm.parse({ amount_usd: '1,000' })).toEqual({ amount_usd: 1000 });
    expect(usdLimit.parse('1,500.25')).toBe(150_025);
    expect(optionalUsdLimit('m').parse('')).toBeNull();
    expect(optionalUsdLimit('m').parse('2,000')).toBe(200_000);
    expect(optionalUsdLimit('m').safeParse('10,000,001').error?.issues[0]?.message).toBe('m');
    expect(topUpRequestForm.safeParse({ amount_usd: '0' }).error?.issues[0]?.message).toBe('must be greater than 0');
  });
});
