import { parse } from 'fast-querystring';

/** On a parsed query: the names of parameters whose percent-escapes are not UTF-8 (not enumerable). */
export const BADLY_ENCODED = Symbol('badly encoded query parameters');

/**
 * Fastify's own query-string parser (fast-querystring), plus a note of the parameters it could not
 * decode: it keeps `%ED%A0%80` or a lone `%` as typed, so `?q=%ED%A0%80` searched for that text.
 * Validation refuses them by name (app.ts); a query without `%` costs one `includes`.
 */
export function parseQueryString(query: string): Record<string, unknown> {
  if (query.length === 0) return {};
  const parsed = parse(query) as Record<string | symbol, unknown>;
  if (query.includes('%')) {
    const bad = badlyEncoded(query);
    if (bad.length) Object.defineProperty(parsed, BADLY_ENCODED, { value: bad, enumerable: false });
  }
  return parsed as Record<string, unknown>;
}

function badlyEncoded(query: string): string[] {
  const names: string[] = [];
  for (const pair of query.split('&')) {
    if (!pair.includes('%')) continue;
    try {
      decodeURIComponent(pair.replace(/\+/g, ' '));
    } catch {
      const eq = pair.indexOf('=');
      const name = eq === -1 ? pair : pair.slice(0, eq);
      names.push(safeDecode(name));
    }
  }
  return names;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/** The names `parseQueryString` noted on a parsed query, if any. */
export function badlyEncodedNames(query: unknown): string[] | undefined {
  return query && typeof query === 'object' ? ((query as Record<symbol, unknown>)[BADLY_ENCODED] as string[] | undefined) : undefined;
}
