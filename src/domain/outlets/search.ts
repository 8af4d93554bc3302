import type pg from 'pg';
import { formatCents } from '../money/format.js';
import type { OfferFormat, OutletSort, OutletType } from './enums.js';
import { type Money, outletColumns, type OutletRow, outletView, trackRecordJoin } from './outlet-view.js';

export interface OutletFilters {
  q?: string;
  type?: OutletType;
  format?: OfferFormat;
  country?: string;
  topic?: string;
  maxPriceCents?: number;
  verifiedTraffic?: boolean;
  minTraffic?: number;
  sort?: OutletSort;
}

interface Built {
  name: string;
  text: string;
  values: unknown[];
}

/**
 * Builds the listing's page and count statements. Each combination of filters is its own named
 * statement, prepared once per connection. Every outlet is joined to its cheapest matching
 * offer in `outlet_prices` (format, or 'any'), which filters by price, sorts by price from an
 * index and yields `from_price` without aggregating offers per request.
 */
export function buildSearch(f: OutletFilters, workspaceId: number, page: number, perPage: number) {
  const values: unknown[] = [];
  const param = (v: unknown) => {
    values.push(v);
    return `$${values.length}`;
  };
  const where: string[] = [];
  const shape: string[] = [];
  const fmt = param(f.format ?? 'any');
  let rank = '';
  if (f.q) {
    const q = param(f.q);
    const tsq = `(websearch_to_tsquery('simple', ${q}) || websearch_to_tsquery('english', ${q}))`;
    // Full text for words, trigram word similarity for misspelt or partial names and domains.
    where.push(`(o.search_vector @@ ${tsq} OR o.name %> ${q} OR o.domain %> ${q})`);
    rank = `(CASE WHEN lower(o.name) = lower(${q}) OR o.domain = lower(${q}) THEN 10 ELSE 0 END
      + ts_rank_cd(o.search_vector, ${tsq}) + 2 * word_similarity(${q}, o.name) + word_similarity(${q}, o.domain))`;
    shape.push('q');
  }
  if (f.type) (where.push(`o.type = ${param(f.type)}::outlet_type`), shape.push('type'));
  if (f.country) (where.push(`o.country = ${param(f.country)}`), shape.push('country'));
  if (f.topic) (where.push(`o.topics @> ARRAY[${param(f.topic)}]::text[]`), shape.push('topic'));
  if (f.verifiedTraffic !== undefined) (where.push(`o.traffic_verified = ${param(f.verifiedTraffic)}`), shape.push('verified'));
  if (f.minTraffic !== undefined) (where.push(`o.monthly_visits >= ${param(f.minTraffic)}`), shape.push('min_traffic'));
  const priceWhere = f.maxPriceCents !== undefined ? `p.min_price <= ${param(f.maxPriceCents)}` : undefined;
  if (priceWhere) shape.push('max_price');

  const sort = f.sort ?? (f.q ? 'relevance' : '-traffic');
  // With a text match, sorting on `monthly_visits + 0` keeps the planner off the traffic index,
  // which it would otherwise walk hoping to find matches early (see docs/search.md).
  const traffic = f.q ? 'o.monthly_visits + 0' : 'o.monthly_visits';
  const order = {
    relevance: rank ? `${rank} DESC, o.monthly_visits DESC, o.id` : 'o.monthly_visits DESC, o.id DESC',
    traffic: `${traffic} ASC, o.id`,
    '-traffic': `${traffic} DESC, o.id DESC`,
    price: 'p.min_price ASC, p.outlet_id',
    '-price': 'p.min_price DESC, p.outlet_id DESC',
  }[sort];

  const conditions = [...where, ...(priceWhere ? [priceWhere] : [])];
  const whereSql = conditions.length ? `WHERE ${conditions.join(' AND ')}` : '';
  const countValues = [...values];
  const ws = param(workspaceId);
  const limit = param(perPage);
  const offset = param((page - 1) * perPage);
  const key = `${shape.join('+') || 'all'}:${sort}`;

  const pageQuery: Built = {
    name: `outlets_page:${key}`,
    text: `SELECT ${outletColumns}, p.min_price AS from_price, m.currency, m.per_usd
             FROM outlets o JOIN outlet_prices p ON p.outlet_id = o.id AND p.format = ${fmt}
            CROSS JOIN (SELECT w.currency, fx.per_usd::float8 AS per_usd FROM workspaces w
                          JOIN fx_rates fx ON fx.currency = w.currency WHERE w.id = ${ws}) m
            ${trackRecordJoin}
            ${whereSql}
            ORDER BY ${order}
            LIMIT ${limit} OFFSET ${offset}`,
    values,
  };
  // Without outlet filters the count comes from outlet_prices alone (an index-only scan).
  const countQuery: Built = {
    name: `outlets_count:${shape.join('+') || 'all'}`,
    text: where.length
      ? `SELECT count(*)::int AS n FROM outlets o JOIN outlet_prices p ON p.outlet_id = o.id AND p.format = $1 ${whereSql}`
      : `SELECT count(*)::int AS n FROM outlet_prices p WHERE p.format = $1 ${priceWhere ? `AND ${priceWhere}` : ''}`,
    values: countValues,
  };
  return { pageQuery, countQuery };
}

export async function searchOutlets(pool: pg.Pool, workspaceId: number, f: OutletFilters, page: number, perPage: number) {
  const { pageQuery, countQuery } = buildSearch(f, workspaceId, page, perPage);
  const [pageResult, countResult] = await Promise.all([pool.query(pageQuery), pool.query(countQuery)]);
  const rows = pageResult.rows as (OutletRow & { from_price: number; currency: string; per_usd: number })[];
  const items = rows.map((r) => {
    const money: Money = { currency: r.currency, perUsd: r.per_usd };
    return { ...outletView(r), from_price: r.from_price, from_price_formatted: formatCents(r.from_price, money.currency, money.perUsd) };
  });
  return { items, total: countResult.rows[0].n as number };
}
