import { createHash } from 'node:crypto';
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
 * PostgreSQL truncates statement names to 63 bytes, so two long names sharing a prefix would be
 * one statement ("prepared statement … already exists" on a connection that prepared the other).
 * Long names keep a readable prefix and end in a hash of the whole name.
 */
export function statementName(name: string): string {
  return name.length <= 63 ? name : `${name.slice(0, 30)}#${createHash('sha1').update(name).digest('hex').slice(0, 32)}`;
}

/** The outlets column holding the cheapest active offer of a format (or of any format). */
const PRICE_COLUMN: Record<OfferFormat | 'any', string> = {
  any: 'o.min_price_any',
  guest_post: 'o.min_price_guest_post',
  sponsored_article: 'o.min_price_sponsored_article',
  link_insertion: 'o.min_price_link_insertion',
  press_release: 'o.min_price_press_release',
};

/**
 * Builds the listing's page and count statements over the outlets table alone: the cheapest
 * matching offer is a column (`min_price_*`), so format and price filters and the price sort use
 * single-table indexes. Each combination of filters is its own named statement, prepared once
 * per connection.
 */
export function buildSearch(f: OutletFilters, workspaceId: number, page: number, perPage: number) {
  const values: unknown[] = [];
  const param = (v: unknown) => {
    values.push(v);
    return `$${values.length}`;
  };
  const price = PRICE_COLUMN[f.format ?? 'any'];
  // Only outlets with an active offer (of the format) are listed and orderable.
  const where: string[] = [`${price} IS NOT NULL`];
  const shape: string[] = [f.format ?? 'any'];
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
  if (f.maxPriceCents !== undefined) (where.push(`${price} <= ${param(f.maxPriceCents)}`), shape.push('max_price'));

  const sort = f.sort ?? (f.q ? 'relevance' : '-traffic');
  // With a text match, sorting on `monthly_visits + 0` keeps the planner off the traffic index,
  // which it would otherwise walk hoping to find matches early (see docs/search.md).
  const traffic = f.q ? 'o.monthly_visits + 0' : 'o.monthly_visits';
  // NULLS LAST/FIRST spelled out to match the traffic indexes (DESC NULLS LAST), read either way.
  const order = {
    relevance: rank ? `${rank} DESC, o.monthly_visits DESC, o.id` : 'o.monthly_visits DESC NULLS LAST, o.id DESC NULLS LAST',
    traffic: `${traffic} ASC NULLS FIRST, o.id ASC NULLS FIRST`,
    '-traffic': `${traffic} DESC NULLS LAST, o.id DESC NULLS LAST`,
    price: `${price} ASC, o.id`,
    '-price': `${price} DESC, o.id DESC`,
  }[sort];

  const whereSql = `WHERE ${where.join(' AND ')}`;
  const countValues = [...values];
  const ws = param(workspaceId);
  const limit = param(perPage);
  const offset = param((page - 1) * perPage);
  const key = shape.join('+');

  const pageQuery: Built = {
    name: statementName(`outlets_page:${key}:${sort}`),
    text: `SELECT ${outletColumns}, ${price} AS from_price, m.currency, m.per_usd
             FROM outlets o
            CROSS JOIN (SELECT w.currency, fx.per_usd::float8 AS per_usd FROM workspaces w
                          JOIN fx_rates fx ON fx.currency = w.currency WHERE w.id = ${ws}) m
            ${trackRecordJoin}
            ${whereSql}
            ORDER BY ${order}
            LIMIT ${limit} OFFSET ${offset}`,
    values,
  };
  const countQuery: Built = {
    name: statementName(`outlets_count:${key}`),
    text: `SELECT count(*)::int AS n FROM outlets o ${whereSql}`,
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
