import type { OutletSort } from '../../src/domain/outlets/enums.js';
import { type OutletSearch, outletSearchOf } from '../../src/domain/outlets/search.js';

/**
 * A generated query's URL parameters (bench/scenarios/search.ts) as GET /api/v1/outlets reads
 * them: the search, its page and page size; for the benchmarks that ask the engine directly.
 */
export function searchOfParams(p: Record<string, string>): OutletSearch & { page: number; perPage: number } {
  return {
    ...outletSearchOf({
      q: p.q,
      country: p.country,
      topic: p.topic,
      language: p.language,
      max_price_cents: p.max_price_usd ? Number(p.max_price_usd) * 100 : undefined,
      verified_traffic: p.verified_traffic === undefined ? undefined : p.verified_traffic === 'true',
      sort: p.sort as OutletSort | undefined,
    }),
    page: Number(p.page ?? 1),
    perPage: Number(p.per_page ?? 15),
  };
}

/** The search as the engine is asked it (SearchEngine.search), as searchOutlets asks. */
export function engineRequest(s: ReturnType<typeof searchOfParams>) {
  return { q: s.q, filter: s.filter, sort: s.sort ?? (s.q ? 'relevance' : '-traffic'), offset: (s.page - 1) * s.perPage, limit: s.perPage } as const;
}
