import { afterAll, describe, expect, it } from 'vitest';
import { decimalSql, decimalToMinor, minorDigits, minorToDecimal, usdCentsToDecimal } from '../../../src/domain/catalog/money.js';
import { createTestDatabase } from '../../helpers/db.js';

// Money in Interface B: decimal numbers in the currency's minor unit, the same in JavaScript
// (account balance, item import) and in the SQL that builds item and purchase JSON.

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

  it('the SQL gives the same decimals as JavaScript, printed as JSON numbers', async () => {
    const cases: [number, string][] = [
      [1999, 'USD'], [9900, 'USD'], [0, 'USD'], [5, 'EUR'], [1999, 'JPY'], [1999, 'BHD'], [1000, 'BHD'], [123456789, 'GBP'],
    ];
    for (const [minor, currency] of cases) {
      const { rows } = await database.pool.query<{ j: string }>(
        `SELECT json_build_array(${decimalSql('$1::bigint', '$2::char(3)')})::text AS j`,
        [minor, currency],
      );
      expect(rows[0]!.j, `${minor} ${currency}`).toBe(JSON.stringify([minorToDecimal(minor, currency)]));
    }
  });
});
