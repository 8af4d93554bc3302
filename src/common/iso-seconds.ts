/**
 * A time as every answer writes it: ISO 8601 UTC to the second (2026-11-22T10:00:00Z), from a
 * Date, a timestamp's text or milliseconds since the epoch; null stays null.
 */
export function isoSeconds(at: Date | string | number): string;
export function isoSeconds(at: Date | string | number | null): string | null;
export function isoSeconds(at: Date | string | number | null): string | null {
  return at === null ? null : new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
