import { createHash } from 'node:crypto';
import pg from 'pg';

const { escapeLiteral } = pg;
import { formatCents } from '../money/format.js';
import type { OfferFormat, OutletSort, OutletType } from './enums.js';
import { type Money, outletColumns, type OutletRow, outletView, trackRecordJoin } from './outlet-view.js';
import { countMatches } from './search-count.js';
import type { CountQuery, PickWay } from './search-counter.js';
import { counterFor } from './search-live.js';
import { completionsOf, lookupTerms, type TermsOfWord } from './search-terms.js';
import { parseQuery, type QueryWord } from './search-text.js';

export interface OutletFilters {
  q?: string;
  type?: OutletType;
  format?: OfferFormat;
  country?: string;
  /** ISO 639-1. */
  language?: string;
  topic?: string;
  maxPriceCents?: number;
  verifiedTraffic?: boolean;
  minTraffic?: number;
  sort?: OutletSort;
}

/**
 * What decides which way a page is read (docs/search.md). Tests change them so that small
 * fixtures take every path; nothing else does.
 */
export const searchTuning = {
  /** Whether the page's ids and the total come from the in-memory index when it is loaded. */
  inMemory: true,
  /** In memory, how a tier's page is picked: walking a slot order, sorting its matches, or the cheaper. */
  pick: 'auto' as PickWay,
  /**
   * In PostgreSQL (the index still loading, or a phrase): the most rows of the sort's own index
   * order (most traffic first, or cheapest first) a page is looked for in before the word index
   * is read. When the matches are a sizeable share of the catalog, the page is there after a few
   * dozen rows, whatever the number of matches.
   */
  walkRows: 20_000,
  /** In PostgreSQL: with fewer matches than this (a recent count says so), the word index is read directly. */
  fewMatches: 5_000,
};

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

export interface Statement {
  name?: string;
  text: string;
  values: unknown[];
}

class Params {
  readonly values: unknown[] = [];
  add(v: unknown): string {
    this.values.push(v);
    return `$${this.values.length}`;
  }
}

/**
 * The filters as SQL over `outlets o` (no text), and a key naming their shape. `indexed` are the
 * equalities with an index in traffic order of their own (country, type, language, verified).
 */
interface Filters {
  where: string;
  indexed: string[];
  other: string[];
  /** Every filter as a row test no index serves. */
  tested: string;
  shape: string;
  price: string;
}

function filterSql(f: OutletFilters, p: Params): Filters {
  const price = PRICE_COLUMN[f.format ?? 'any'];
  // Only outlets with an active offer (of the format) are listed and orderable.
  const other: string[] = [`${price} IS NOT NULL`];
  const indexed: string[] = [];
  const shape: string[] = [f.format ?? 'any'];
  // The same filters as tests on the rows a word index found (`tested`): written so that no
  // index serves them (a cast, `+ 0`, array_position), or the planner may AND the word's few
  // matches with a filter's index entries for a tenth of the catalog (a price bound, a topic, a
  // country). Each value is one parameter, typed, used by both.
  const tested: string[] = [`(${price} + 0) IS NOT NULL`];
  if (f.type) {
    const v = `${p.add(f.type)}::outlet_type`;
    indexed.push(`o.type = ${v}`);
    tested.push(`o.type::text = ${v}::text`);
    shape.push('type');
  }
  if (f.country) {
    const v = `${p.add(f.country)}::bpchar`;
    indexed.push(`o.country = ${v}`);
    tested.push(`o.country::text = ${v}::text`);
    shape.push('country');
  }
  if (f.language) {
    const v = `${p.add(f.language)}::bpchar`;
    indexed.push(`o.language = ${v}`);
    tested.push(`o.language::text = ${v}::text`);
    shape.push('language');
  }
  if (f.topic) {
    const v = `${p.add(f.topic)}::text`;
    other.push(`o.topics @> ARRAY[${v}]`);
    tested.push(`array_position(o.topics, ${v}) IS NOT NULL`);
    shape.push('topic');
  }
  if (f.verifiedTraffic !== undefined) {
    const v = `${p.add(f.verifiedTraffic)}::boolean`;
    indexed.push(`o.traffic_verified = ${v}`);
    tested.push(`o.traffic_verified IS NOT DISTINCT FROM ${v}`);
    shape.push('verified');
  }
  if (f.minTraffic !== undefined) {
    const v = `${p.add(f.minTraffic)}::bigint`;
    other.push(`o.monthly_visits >= ${v}`);
    tested.push(`o.monthly_visits + 0 >= ${v}`);
    shape.push('min_traffic');
  }
  if (f.maxPriceCents !== undefined) {
    const v = `${p.add(f.maxPriceCents)}::bigint`;
    other.push(`${price} <= ${v}`);
    tested.push(`${price} + 0 <= ${v}`);
    shape.push('max_price');
  }
  return {
    where: [...indexed, ...other].join(' AND '),
    indexed,
    other,
    tested: tested.join(' AND '),
    shape: shape.join('+'),
    price,
  };
}

type Direction = 'walk' | 'matches';

/** The sorts by a track-record figure: the outlets with it first, in its order, then the rest by traffic. */
type RatedSort = 'link_survival' | 'verification';
const isRated = (sort: OutletSort): sort is RatedSort => sort === 'link_survival' || sort === 'verification';

/**
 * A rated sort in PostgreSQL (the in-memory index keeps these figures per outlet), from the
 * outlet's orders: `checked` the orders with a check result for it, `figures` their counts and
 * rates as the track record rounds them (`n`: how many), `order` the outlets' order by them.
 */
const RATED: Record<RatedSort, { checked: string; figures: string; order: string }> = {
  link_survival: {
    checked: '(r.alive_30d IS NOT NULL OR r.alive_60d IS NOT NULL)',
    figures: `count(*) AS n, count(r.alive_30d) AS n30, count(r.alive_60d) AS n60,
              round(count(*) FILTER (WHERE r.alive_30d)::numeric / NULLIF(count(r.alive_30d), 0), 3) AS s30,
              round(count(*) FILTER (WHERE r.alive_60d)::numeric / NULLIF(count(r.alive_60d), 0), 3) AS s60`,
    order: 'k.s30 DESC NULLS LAST, k.s60 DESC NULLS LAST, k.n30 DESC, k.n60 DESC, o.monthly_visits DESC, o.id DESC',
  },
  verification: {
    checked: 'r.first_check_passed IS NOT NULL',
    figures: `count(*) AS n, round(count(*) FILTER (WHERE r.first_check_passed)::numeric / NULLIF(count(*), 0), 3) AS pv`,
    order: 'k.pv DESC, k.n DESC, o.monthly_visits DESC, o.id DESC',
  },
};

/**
 * Whether outlet `o` has no checked order, a probe of orders_outlet_idx: a scalar subquery, never
 * hashed (as NOT EXISTS may be, reading every order to test the few rows a walk passes).
 */
const unrated = (sort: RatedSort) => `(SELECT 1 FROM orders r WHERE r.outlet_id = o.id AND ${RATED[sort].checked} LIMIT 1) IS NULL`;

/**
 * ORDER BY of a sort. `walk` matches an index (outlets_traffic_idx, the min_price_* indexes),
 * read in that order; `matches` hides the column from the planner (`+ 0`) so that it sorts the
 * matches it found through the word index instead of walking the whole sort index hoping to
 * meet them.
 */
function orderSql(sort: Exclude<OutletSort, 'relevance' | RatedSort>, price: string, how: Direction): string {
  const z = how === 'walk' ? '' : ' + 0';
  return {
    traffic: `o.monthly_visits${z} ASC NULLS FIRST, o.id ASC NULLS FIRST`,
    '-traffic': `o.monthly_visits${z} DESC NULLS LAST, o.id DESC NULLS LAST`,
    price: `${price}${z} ASC, o.id`,
    '-price': `${price}${z} DESC, o.id DESC`,
  }[sort];
}

/** A lexeme as a tsquery operand: quoted, so any character in it is text, never an operator. */
const lexeme = (l: string) => `'${l.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;

/**
 * A tsquery requiring every word: each word as any of its accepted forms, a phrase's words next
 * to each other in order. Undefined when a word has no form (nothing can match).
 */
function tsquery(words: QueryWord[], forms: (i: number) => string[]): string | undefined {
  const groups: string[] = [];
  let phrase: { id: number; parts: string[] } | undefined;
  const flush = () => {
    if (phrase) groups.push(phrase.parts.length > 1 ? `(${phrase.parts.join(' <-> ')})` : phrase.parts[0]!);
    phrase = undefined;
  };
  for (let i = 0; i < words.length; i++) {
    const alts = forms(i);
    if (alts.length === 0) return undefined;
    const operand = alts.length === 1 ? alts[0]! : `(${alts.join(' | ')})`;
    const w = words[i]!;
    if (w.phrase === undefined) {
      flush();
      groups.push(operand);
    } else {
      if (phrase?.id !== w.phrase) flush();
      phrase ??= { id: w.phrase, parts: [] };
      phrase.parts.push(operand);
    }
  }
  flush();
  return groups.length ? groups.join(' & ') : undefined;
}

/**
 * What the text of a search matches, as SQL predicates over `outlets o`. The query's text is in
 * them as escaped literals (never as tsquery syntax: every lexeme is quoted), so each statement
 * is planned for its own words: how many outlets a word matches decides the plan.
 */
export interface TextMatch {
  /** Tiers of relevance, best first; each excludes the ones before it. */
  tiers: string[];
  /** Everything the query finds (the union of the tiers). */
  all: string;
  /** The same match for an in-memory count; undefined for a phrase (positions are not kept). */
  counted: CountQuery | undefined;
}

/**
 * The query's tiers: the exact name or domain; every word in the name or domain; every word
 * anywhere (topics and description too). A word matches as typed or as its English stem, the last
 * one also as the start of a longer word; a word the catalog does not know matches through its
 * nearest terms instead (typos). Within a tier, the sort orders (traffic for relevance).
 * Undefined when the text has nothing to search for (only punctuation or stop words).
 */
export function textMatch(q: string, terms: readonly TermsOfWord[], completions: readonly string[] = []): TextMatch | undefined {
  const parsed = parseQuery(q);
  const words = parsed.words;
  if (words.length === 0 && !parsed.domain) return undefined;
  const exact = parsed.domain
    ? `(lower(o.name) = ${escapeLiteral(parsed.exactName)} OR o.domain = ${escapeLiteral(parsed.domain)})`
    : `lower(o.name) = ${escapeLiteral(parsed.exactName)}`;
  const groups = words.map((_, i) => {
    const t = terms[i]!;
    const last = i === words.length - 1 ? completions : [];
    // An unknown word keeps its own forms too: it may have arrived in the catalog since it was
    // looked up (lookups are remembered for a second).
    return { lexemes: [...new Set([...(t.known ? t.forms : [...t.near, ...t.forms]), ...last])] };
  });
  const query = words.length ? tsquery(words, (i) => groups[i]!.lexemes.map(lexeme)) : undefined;
  const counted = words.some((w) => w.phrase !== undefined) ? undefined : { exactName: parsed.exactName, domain: parsed.domain, groups };
  if (!query) return { tiers: [exact], all: exact, counted: counted && { ...counted, groups: [] } };
  const tq = `${escapeLiteral(query)}::tsquery`;
  return {
    tiers: [exact, `o.name_vector @@ ${tq} AND NOT ${exact}`, `o.search_vector @@ ${tq} AND NOT o.name_vector @@ ${tq} AND NOT ${exact}`],
    // The name tier reads name_vector, which also holds the name's English stems.
    all: `(${exact} OR o.search_vector @@ ${tq} OR o.name_vector @@ ${tq})`,
    counted,
  };
}

/**
 * The first `n` ids of the outlets matching `pred` and the filters, in the sort's order, reading
 * no more than the page needs: first the top `walkRows` rows of the sort's index (for a traffic
 * order, within the indexed filters: their own index in traffic order), keeping those that match
 * (a page of a broad query is found there after a few dozen rows); only when they hold fewer
 * than `n`, the matches found through the word index, sorted. With a known small number of
 * matches, straight to the word index.
 */
function pageIdsStatement(
  pred: string,
  filters: Filters,
  order: { walk: string; matches: string; trafficOrder: boolean },
  n: number,
  walk: number | undefined,
  p: Params,
): Statement {
  const limit = p.add(n);
  const matches = `SELECT o.id FROM outlets o WHERE ${pred} AND ${filters.tested} ORDER BY ${order.matches} LIMIT ${limit}`;
  if (walk === undefined) return { text: matches, values: p.values };
  const within = order.trafficOrder ? filters.indexed : [];
  const test = [pred, ...(order.trafficOrder ? filters.other : [...filters.indexed, ...filters.other])].join(' AND ');
  const walkRows = p.add(walk);
  return {
    text: `WITH walked AS MATERIALIZED (
             SELECT s.id FROM (SELECT o.id, (${test}) AS hit FROM outlets o
                                ${within.length ? `WHERE ${within.join(' AND ')}` : ''}
                                ORDER BY ${order.walk} LIMIT ${walkRows}) s
              WHERE s.hit LIMIT ${limit})
           SELECT id FROM walked WHERE (SELECT count(*) FROM walked) >= ${limit}
           UNION ALL
           SELECT id FROM (${matches}) m WHERE (SELECT count(*) FROM walked) < ${limit}`,
    values: p.values,
  };
}

/**
 * The page's rows with the track record and the workspace's money, in the order of `ids`: the
 * only rows a search reads from PostgreSQL when the in-memory index chose them. An outlet whose
 * last active offer of the format went in the moment before its notification is left out.
 */
export function hydrateStatement(ids: number[], format: OfferFormat | undefined, workspaceId: number): Statement {
  const price = PRICE_COLUMN[format ?? 'any'];
  return {
    name: `outlets_rows:${format ?? 'any'}`,
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

/**
 * Filters without text: one statement per filter shape, prepared once per connection (their
 * plans do not depend on the values: every filter has a traffic- or price-ordered index).
 */
function browseStatements(f: OutletFilters, n: number) {
  const p = new Params();
  const { where, shape, price } = filterSql(f, p);
  const sort = f.sort === undefined || f.sort === 'relevance' || isRated(f.sort) ? '-traffic' : f.sort;
  const countValues = [...p.values];
  const limit = p.add(n);
  return {
    page: {
      name: statementName(`outlets_browse:${shape}:${sort}`),
      text: `SELECT o.id FROM outlets o WHERE ${where} ORDER BY ${orderSql(sort, price, 'walk')} LIMIT ${limit}`,
      values: p.values,
    } satisfies Statement,
    count: { name: statementName(`outlets_count:${shape}`), text: `SELECT count(*)::int AS n FROM outlets o WHERE ${where}`, values: countValues } satisfies Statement,
  };
}

/**
 * A part of a page read in PostgreSQL, in order: a relevance tier, all matches, or one side of a
 * rated sort. `walks`: whether it may walk the sort's index first; `page(walk)` is given the rows
 * to walk when the matches may be many (a recent count says so, or none is at hand).
 */
interface Part {
  page(walk: number | undefined, rows: number): Statement;
  walks: boolean;
}

/** The parts of the page of `preds` (none: no text) in the sort's order. */
function partsOf(f: OutletFilters, preds: string[], sort: OutletSort): Part[] {
  const statement = (pred: string, walk: number | undefined, rows: number, order: OutletSort) => {
    const p = new Params();
    const filters = filterSql(f, p);
    return pageIdsStatement(pred, filters, sortOrders(order, filters.price), rows, walk, p);
  };
  if (isRated(sort)) {
    const rated = RATED[sort];
    const pred = preds[0] ?? 'TRUE';
    // A browse has few matches only through a filter with an index of its own.
    const fewPossible = preds.length > 0 || [f.type, f.country, f.language, f.topic, f.verifiedTraffic].some((v) => v !== undefined);
    return [
      {
        // The outlets with figures, sorted by them (no index orders them): with many matches,
        // every checked order read (orders_checked_outlet_idx) and grouped, joined to the matches by id; with few, each
        // match's orders read by orders_outlet_idx. Without text, the filters as indexed.
        page: (walk, rows) => {
          const p = new Params();
          const filters = filterSql(f, p);
          const limit = p.add(rows);
          const test = `${pred} AND ${preds.length ? filters.tested : filters.where}`;
          const from =
            walk === undefined && fewPossible
              ? `outlets o CROSS JOIN LATERAL (SELECT ${rated.figures} FROM orders r WHERE r.outlet_id = o.id AND ${rated.checked}) k`
              : `(SELECT r.outlet_id, ${rated.figures} FROM orders r WHERE ${rated.checked} GROUP BY r.outlet_id) k JOIN outlets o ON o.id = k.outlet_id`;
          return { text: `SELECT o.id FROM ${from} WHERE ${test} AND k.n > 0 ORDER BY ${rated.order} LIMIT ${limit}`, values: p.values };
        },
        walks: true,
      },
      preds.length
        ? { page: (walk, rows) => statement(`${pred} AND ${unrated(sort)}`, walk, rows, '-traffic'), walks: true }
        : {
            // Without text, as a browse reads: the traffic index (within an indexed filter).
            page: (_walk, rows) => {
              const p = new Params();
              const filters = filterSql(f, p);
              const limit = p.add(rows);
              return {
                text: `SELECT o.id FROM outlets o WHERE ${filters.where} AND ${unrated(sort)} ORDER BY ${orderSql('-traffic', filters.price, 'walk')} LIMIT ${limit}`,
                values: p.values,
              };
            },
            walks: false,
          },
    ];
  }
  // The exact-name tier is a few index lookups: never a walk.
  return preds.map((pred, t) => ({ page: (walk, rows) => statement(pred, walk, rows, sort), walks: !(preds.length > 1 && t === 0) }));
}

export interface SearchPlan {
  /**
   * Every statement that may read the page in PostgreSQL: each tier walked, then each from the
   * word index; and the statement reading the page's rows by id.
   */
  pages: Statement[];
  count: Statement;
}

/** How a search with text is read; undefined when the text has nothing to search for. */
async function textPlan(pool: pg.Pool, f: OutletFilters & { q: string }, n: number) {
  const parsed = parseQuery(f.q);
  const words = parsed.words;
  const last = words.at(-1);
  const vocabulary = searchTuning.inMemory ? counterFor(pool) : undefined;
  const [terms, completions] = await Promise.all([
    lookupTerms(pool, words.map((w) => w.text), vocabulary),
    parsed.prefixLast && last && last.text.length >= 3 ? completionsOf(pool, last.text, vocabulary) : Promise.resolve([]),
  ]);
  const m = textMatch(f.q, terms, completions);
  if (!m) return undefined;
  const sort = f.sort ?? 'relevance';
  const p = new Params();
  const { where } = filterSql(f, p);
  return {
    parts: partsOf(f, sort === 'relevance' ? m.tiers : [m.all], sort),
    counted: m.counted,
    count: { text: `SELECT count(*)::int AS n FROM outlets o WHERE ${m.all} AND ${where}`, values: p.values } satisfies Statement,
  };
}

/** The statements of one search (for EXPLAIN in tests and benchmarks). */
export async function searchStatements(pool: pg.Pool, f: OutletFilters, page: number, perPage: number): Promise<SearchPlan | undefined> {
  const n = page * perPage;
  const rows = hydrateStatement(
    Array.from({ length: perPage }, (_, i) => i + 1),
    f.format,
    0,
  );
  const walkedAndNot = (parts: Part[]) => [
    ...parts.filter((x) => x.walks).map((x) => x.page(searchTuning.walkRows, n)),
    ...parts.map((x) => x.page(undefined, n)),
  ];
  if (!f.q) {
    const b = browseStatements(f, n);
    return { pages: [...(f.sort && isRated(f.sort) ? walkedAndNot(partsOf(f, [], f.sort)) : [b.page]), rows], count: b.count };
  }
  const plan = await textPlan(pool, { ...f, q: f.q }, n);
  if (!plan) return undefined;
  return { pages: [...walkedAndNot(plan.parts), rows], count: plan.count };
}

function sortOrders(sort: OutletSort, price: string) {
  const s = sort === 'relevance' || isRated(sort) ? '-traffic' : sort;
  return { walk: orderSql(s, price, 'walk'), matches: orderSql(s, price, 'matches'), trafficOrder: s === 'traffic' || s === '-traffic' };
}

type PageRow = OutletRow & { from_price: number; currency: string; per_usd: number };

/** The page's ids (in order) and the total. */
async function findPage(pool: pg.Pool, f: OutletFilters, page: number, perPage: number): Promise<{ ids: number[]; total: number }> {
  const offset = (page - 1) * perPage;
  const n = offset + perPage;
  const counter = searchTuning.inMemory ? counterFor(pool) : undefined;
  const sort = f.sort ?? 'relevance';
  // No in-memory index (still loading) or a phrase (it keeps no positions): PostgreSQL picks the
  // page and counts, the count kept up to 4 s; a count at hand tells whether walking can pay off,
  // else the walk is tried (it reads at most walkRows).
  const readParts = async (parts: Part[], countStatement: Statement) => {
    const ids: number[] = [];
    const count = countMatches(pool, countStatement);
    const walk = count.known === undefined || count.known >= searchTuning.fewMatches;
    for (let t = 0; t < parts.length && ids.length < n; t++) {
      const { rows } = await pool.query<{ id: number }>(parts[t]!.page(walk && parts[t]!.walks ? searchTuning.walkRows : undefined, n - ids.length));
      for (const r of rows) ids.push(r.id);
    }
    return { ids: ids.slice(offset, n), total: await count.total };
  };
  if (!f.q) {
    const found = counter?.search(undefined, f, sort, n, searchTuning.pick);
    if (found) return { ids: found.ids.slice(offset), total: found.total };
    const b = browseStatements(f, n);
    if (isRated(sort)) return readParts(partsOf(f, [], sort), b.count);
    const count = countMatches(pool, b.count).total;
    const rows = await pool.query<{ id: number }>(b.page);
    return { ids: rows.rows.map((r) => r.id).slice(offset), total: await count };
  }
  const plan = await textPlan(pool, { ...f, q: f.q }, n);
  if (!plan) return { ids: [], total: 0 };
  // The in-memory index picks the page (docs/search.md): PostgreSQL reads only its rows.
  const found = plan.counted && counter?.search(plan.counted, f, sort, n, searchTuning.pick);
  if (found) return { ids: found.ids.slice(offset), total: found.total };
  return readParts(plan.parts, plan.count);
}

export async function searchOutlets(pool: pg.Pool, workspaceId: number, f: OutletFilters, page: number, perPage: number) {
  const { ids, total } = await findPage(pool, f, page, perPage);
  if (ids.length === 0) return { items: [], total };
  const { rows } = await pool.query<PageRow>(hydrateStatement(ids, f.format, workspaceId));
  const items = rows.map((r) => {
    const money: Money = { currency: r.currency, perUsd: r.per_usd };
    return { ...outletView(r), from_price: r.from_price, from_price_formatted: formatCents(r.from_price, money.currency, money.perUsd) };
  });
  return { items, total };
}
