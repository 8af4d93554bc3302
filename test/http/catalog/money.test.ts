import { afterAll, describe, expect, it } from 'vitest';
import { decimalToMinor, minorDigits, minorToDecimal, usdCentsToDecimal } from '../../../src/domain/catalog/money.js';
import { createTestDatabase } from '../../helpers/db.js';

// Money in Interface B: decimal numbers in the currency's minor unit (account balance, item
// import, the prices of items and purchases).

const database = await createTestDatabase({ max: 2 });
afterAll(() => database.drop());

describe('minor units', () => {
  it('follows Intl: 2 digits for most, 0 for JPY, 3 for BHD', () => {
    expect([minorDigits('USD'), minorDigits('EUR'), minorDigits('JPY'), minorDigits('BHD')]).toEqual([2, 2, 0, 3]);
    expect(minorToDecimal(1999, 'USD')).toBe(19.99);
    expect(minorToDecimal(1999, 'JPY')).toBe(1999);
    expect(minorToDecimal(1999, 'BHD')).toBe(1.999);
  });

  it('decimalToMinor refuses more decimal places than the currency has', () => {
    expect(decimalToMinor(19.99, 'USD')).toBe(1999);
    expect(decimalToMinor(0.29, 'USD')).toBe(29); // 0.29 × 100 = 28.999999999999996
    expect(decimalToMinor(1234567.89, 'USD')).toBe(123456789);
    expect(decimalToMinor(19.999, 'USD')).toBeUndefined();
    expect(decimalToMinor(19.5, 'JPY')).toBeUndefined();
    expect(decimalToMinor(1.999, 'BHD')).toBe(1999);
    expect(decimalToMinor(-1, 'USD')).toBeUndefined();
    expect(decimalToMinor(Number.NaN, 'USD')).toBeUndefined();
  });

  it('usdCentsToDecimal converts exactly and rounds half away from zero', () => {
    expect(usdCentsToDecimal(12_345, '1.00000000', 'USD')).toBe(123.45);
    expect(usdCentsToDecimal(1, '10.50000000', 'SEK')).toBe(0.11); // 0.105
    expect(usdCentsToDecimal(1, '10.40000000', 'SEK')).toBe(0.1); // 0.104
    expect(usdCentsToDecimal(12_345, '151.237', 'JPY')).toBe(18_670); // 18670.2765
    expect(usdCentsToDecimal(50, '1', 'JPY')).toBe(1); // 0.5 → 1
    expect(usdCentsToDecimal(0, '0.92', 'EUR')).toBe(0);
    expect(usdCentsToDecimal(999_999_999_999, '0.92', 'EUR')).toBe(9_199_999_999.99);
  });

  it("prints a price as PostgreSQL prints the exact decimal, over the import's whole range", async () => {
    // Prices were written by PostgreSQL (numeric, trailing zeros trimmed) before they were
    // computed here; an import keeps them within 0..10^9 units, so JavaScript's shortest form of
    // minor / 10^digits is that exact decimal (at most 13 significant digits, well within a double's 15).
    const cases: [number, string][] = [];
    let seed = 1;
    const next = () => (seed = (seed * 48_271) % 2_147_483_647);
    for (const currency of ['JPY', 'USD', 'BHD']) {
      const max = 1_000_000_000 * 10 ** minorDigits(currency);
      for (const minor of [0, 1, 5, 9, 10, 99, 100, 101, 1999, 9900, 123_456_789, max - 1, max]) cases.push([minor, currency]);
      for (let i = 0; i < 300; i++) cases.push([Math.floor((next() / 2_147_483_647) * max), currency]);
      for (let i = 0; i < 100; i++) cases.push([next() % 100_000, currency]);
    }
    const { rows } = await database.pool.query<{ d: string }>(
      `SELECT trim_scale(m::numeric / power(10::numeric, d))::text AS d FROM unnest($1::bigint[], $2::int[]) WITH ORDINALITY AS t(m, d, n) ORDER BY n`,
      [cases.map(([m]) => m), cases.map(([, c]) => minorDigits(c))],
    );
    expect(rows.map((r) => r.d)).toEqual(cases.map(([m, c]) => JSON.stringify(minorToDecimal(m, c))));
  });
});
