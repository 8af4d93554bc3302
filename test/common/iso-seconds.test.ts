import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoSeconds } from '../../src/common/iso-seconds.js';

/** What every answer wrote before: ISO 8601 with the milliseconds cut off. */
const reference = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

describe('isoSeconds', () => {
  it('writes any time as toISOString does, to the second, from a Date, its milliseconds or its text', () => {
    // Every millisecond PostgreSQL's timestamptz and JavaScript's Date share, and years beyond
    // 9999 and before 0, which ISO writes with a sign and six digits.
    fc.assert(
      fc.property(fc.integer({ min: -8_640_000_000_000_000, max: 8_640_000_000_000_000 }), (ms) => {
        const d = new Date(ms);
        const want = reference(d);
        expect(isoSeconds(d)).toBe(want);
        expect(isoSeconds(ms)).toBe(want);
        expect(isoSeconds(d.toISOString())).toBe(want);
      }),
      { numRuns: 5_000 },
    );
  });

  it('writes the edges: years 0, 999, 1000 and 9999, the epoch, a leap day, the last second of a year', () => {
    const cases = [
      '0000-01-01T00:00:00.000Z',
      '0999-12-31T23:59:59.999Z',
      '1000-01-01T00:00:00.000Z',
      '1970-01-01T00:00:00.000Z',
      '2024-02-29T12:34:56.789Z',
      '2026-12-31T23:59:59.999Z',
      '9999-12-31T23:59:59.999Z',
      '+010000-01-01T00:00:00.000Z',
      '-000001-12-31T23:59:59.000Z',
    ];
    for (const c of cases) expect(isoSeconds(new Date(c))).toBe(reference(new Date(c)));
    expect(isoSeconds(new Date('2026-11-22T10:00:00.500Z'))).toBe('2026-11-22T10:00:00Z');
    expect(isoSeconds('2026-11-22 10:00:00+02')).toBe('2026-11-22T08:00:00Z');
  });

  it('keeps null, and throws on an invalid date as toISOString does', () => {
    expect(isoSeconds(null)).toBeNull();
    expect(() => isoSeconds('not a date')).toThrow(RangeError);
    expect(() => isoSeconds(Number.NaN)).toThrow(RangeError);
  });
});
