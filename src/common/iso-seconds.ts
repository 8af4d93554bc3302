/** Two digits, zero-padded. */
const two = (n: number) => (n < 10 ? `0${n}` : `${n}`);

/**
 * A time as every answer writes it: ISO 8601 UTC to the second (2026-11-22T10:00:00Z), from a
 * Date, a timestamp's text or milliseconds since the epoch; null stays null.
 *
 * Written from the date's UTC fields: `toISOString()` with the milliseconds cut off took about
 * 1.9 µs here against 0.6 µs, and a placement writes nine of these, an order list of 50 about
 * 150 (bench/RESULTS.md). Years outside 0–9999, which ISO writes with a sign and six digits, and
 * invalid dates (which throw) still go through `toISOString()`.
 */
export function isoSeconds(at: Date | string | number): string;
export function isoSeconds(at: Date | string | number | null): string | null;
export function isoSeconds(at: Date | string | number | null): string | null {
  if (at === null) return null;
  const d = at instanceof Date ? at : new Date(at);
  const year = d.getUTCFullYear();
  if (!(year >= 0 && year <= 9999)) return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
  return `${String(year).padStart(4, '0')}-${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())}T${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}Z`;
}
