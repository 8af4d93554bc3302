import type { Db } from '../../db/handle.js';
import { formatCents } from '../money/format.js';
import type { OfferFormat, OutletSort } from './enums.js';
import { type Money, outletColumns, type OutletRow, outletView, trackRecordJoin } from './outlet-view.js';
import type { SearchEngine } from './search-engine.js';
import { type FilterParams, filterOf, type SearchFilter } from './search-filter.js';
import { orderFormat } from './search-index.js';

// Outlet search (docs/search.md): the engine picks the page's ids and counts the matches;
// PostgreSQL reads the page's rows by id, with the track record and the workspace's money.

export interface OutletSearch {
  q?: string | undefined;
  filter: SearchFilter;
  sort?: OutletSort | undefined;
}

/** A search as REST and MCP parse it (snake case, prices in cents). */
export interface OutletSearchParams extends FilterParams {
  q?: string | undefined;
  sort?: OutletSort | undefined;
}

export const outletSearchOf = (p: OutletSearchParams): OutletSearch => ({ q: p.q || undefined, sort: p.sort, filter: filterOf(p) });

/** The outlets columns holding the cheapest active offer of a format (or of any format). */
const PRICE_COLUMN: Record<OfferFormat | 'any', string> = {
  any: 'o.min_price_any',
  guest_post: 'o.min_price_guest_post',
  sponsored_article: 'o.min_price_sponsored_article',
  link_insertion: 'o.min_price_link_insertion',
  press_release: 'o.min_price_press_release',
};

export interface Statement {
  name?: string;
  text: string;
  values: unknown[];
}

/**
 * The page's rows with the track record and the workspace's money, in the order of `ids`: the
 * only rows a search reads from PostgreSQL. An outlet whose last active offer of the format went
 * in the moment before its notification is left out.
 */
export function hydrateStatement(ids: number[], format: OfferFormat | 'any', workspaceId: number): Statement {
  const price = PRICE_COLUMN[format];
  return {
    name: `outlets_rows:${format}`,
    text: `SELECT ${outletColumns}, ${price} AS from_price, m.currency, m.per_usd
             FROM unnest($1::int[]) WITH ORDINALITY AS p(id, ord)
             JOIN outlets o ON o.id = p.id
            CROSS JOIN (SELECT w.currency, fx.per_usd::float8 AS per_usd FROM workspaces w
                          JOIN fx_rates fx ON fx.currency = w.currency WHERE w.id = $2) m
            ${trackRecordJoin}
            WHERE ${price} IS NOT NULL
            ORDER BY p.ord`,
    values: [ids, workspaceId],
  };
}

type PageRow = OutletRow & { from_price: number; currency: string; per_usd: number };

export async function searchOutlets(engine: SearchEngine, pool: Db, workspaceId: number, s: OutletSearch, page: number, perPage: number) {
  const sort = s.sort ?? (s.q ? 'relevance' : '-traffic');
  const { ids, total } = await engine.search({ q: s.q, filter: s.filter, sort, offset: (page - 1) * perPage, limit: perPage });
  if (ids.length === 0) return { items: [], total };
  const { rows } = await pool.query<PageRow>(hydrateStatement(ids, orderFormat(s.filter), workspaceId));
  const items = rows.map((r) => {
    const money: Money = { currency: r.currency, perUsd: r.per_usd };
    return { ...outletView(r), from_price: r.from_price, from_price_formatted: formatCents(r.from_price, money.currency, money.perUsd) };
  });
  return { items, total };
}
