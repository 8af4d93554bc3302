import type pg from 'pg';
import type { OutletSort } from '../../src/domain/outlets/enums.js';
import type { SearchFilter } from '../../src/domain/outlets/search-filter.js';
import { lexemesOfWord, SearchTerms } from '../../src/domain/outlets/search-terms.js';
import { parseQuery } from '../../src/domain/outlets/search-text.js';

// What a search should answer, computed the slow, obvious way: one SQL statement over every
// outlet, matching with PostgreSQL's own full-text operators (a phrase with `<->`), every filter a
// WHERE clause, ranking an ORDER BY. The search engine must agree with it on the total and on
// every page. The words' forms, corrections and completions come from the same lookups the engine
// uses (that is not what is being compared); building the tsquery text here is test code.

const PRICE: Record<string, string> = {
  any: 'o.min_price_any',
  guest_post: 'o.min_price_guest_post',
  sponsored_article: 'o.min_price_sponsored_article',
  link_insertion: 'o.min_price_link_insertion',
  press_release: 'o.min_price_press_release',
};

const RATED = {
  link_survival: {
    checked: '(r.alive_30d IS NOT NULL OR r.alive_60d IS NOT NULL)',
    figures: `count(*) AS n, count(r.alive_30d) AS n30, count(r.alive_60d) AS n60,
              round(count(*) FILTER (WHERE r.alive_30d)::numeric / NULLIF(count(r.alive_30d), 0), 3) AS s30,
              round(count(*) FILTER (WHERE r.alive_60d)::numeric / NULLIF(count(r.alive_60d), 0), 3) AS s60`,
    order: 'k.s30 DESC NULLS LAST, k.s60 DESC NULLS LAST, k.n30 DESC, k.n60 DESC',
  },
  verification: {
    checked: 'r.first_check_passed IS NOT NULL',
    figures: `count(*) AS n, round(count(*) FILTER (WHERE r.first_check_passed)::numeric / NULLIF(count(*), 0), 3) AS pv`,
    order: 'k.pv DESC, k.n DESC',
  },
};

const quote = (l: string) => `'${l.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;

async function tsquery(pool: pg.Pool, q: string): Promise<{ text: string | undefined; exactName: string; domain: string | undefined } | undefined> {
  const parsed = parseQuery(q);
  const words = parsed.words;
  if (words.length === 0 && !parsed.domain) return undefined;
  const last = words.at(-1);
  // Read afresh, without the index's vocabulary or anything remembered from another search.
  const searchTerms = new SearchTerms(pool);
  const terms = await searchTerms.lookup(words.map((w) => w.text));
  const completions = parsed.prefixLast && last && last.text.length >= 3 ? await searchTerms.completions(last.text) : [];
  const operands = words.map((_, i) => {
    const lexemes = [...new Set([...lexemesOfWord(terms[i]!), ...(i === words.length - 1 ? completions : [])])];
    return lexemes.length === 1 ? quote(lexemes[0]!) : `(${lexemes.map(quote).join(' | ')})`;
  });
  const groups: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const p = words[i]!.phrase;
    if (p === undefined) {
      groups.push(operands[i]!);
      continue;
    }
    const run = [operands[i]!];
    while (words[i + 1]?.phrase === p) run.push(operands[++i]!);
    groups.push(`(${run.join(' <-> ')})`);
  }
  return { text: groups.length ? groups.join(' & ') : undefined, exactName: parsed.exactName, domain: parsed.domain };
}

/** The total and the ids of outlets [offset, offset + limit) of a search, by brute force. */
export async function oracle(
  pool: pg.Pool,
  s: { q?: string | undefined; filter: SearchFilter; sort?: OutletSort | undefined },
  offset: number,
  limit: number,
): Promise<{ total: number; ids: number[] }> {
  const values: unknown[] = [];
  const p = (v: unknown) => `$${values.push(v)}`;
  const f = s.filter;
  const format = f.formats?.length === 1 ? f.formats[0]! : 'any';
  const where: string[] = [];
  where.push(f.formats?.length ? `(${f.formats.map((x) => `${PRICE[x]} IS NOT NULL`).join(' OR ')})` : 'o.min_price_any IS NOT NULL');
  if (f.type) where.push(`o.type::text = ${p(f.type)}`);
  if (f.countries?.length) where.push(`o.country::text = ANY(${p(f.countries)}::text[])`);
  if (f.languages?.length) where.push(`o.language::text = ANY(${p(f.languages)}::text[])`);
  if (f.topic) where.push(`${p(f.topic)}::text = ANY(o.topics)`);
  if (f.verifiedTraffic !== undefined) where.push(`o.traffic_verified = ${p(f.verifiedTraffic)}`);
  if (f.minTraffic !== undefined) where.push(`o.monthly_visits >= ${p(f.minTraffic)}`);
  if (f.maxPriceCents !== undefined) {
    const cols = f.formats?.length ? f.formats.map((x) => PRICE[x]!) : [PRICE.any!];
    where.push(`(${cols.map((c) => `${c} <= ${p(f.maxPriceCents)}`).join(' OR ')})`);
  }
  const sort = s.sort ?? (s.q ? 'relevance' : '-traffic');
  let tier = '0';
  if (s.q) {
    const t = await tsquery(pool, s.q);
    if (!t) return { total: 0, ids: [] };
    const exact = `(lower(o.name) = ${p(t.exactName)}${t.domain ? ` OR o.domain = ${p(t.domain)}` : ''})`;
    if (t.text) {
      const tq = `${p(t.text)}::tsquery`;
      where.push(`(${exact} OR o.search_vector @@ ${tq} OR o.name_vector @@ ${tq})`);
      tier = `CASE WHEN ${exact} THEN 0 WHEN o.name_vector @@ ${tq} THEN 1 WHEN o.search_vector @@ ${tq} THEN 2 ELSE 3 END`;
    } else {
      where.push(exact);
    }
  }
  const price = PRICE[format]!;
  const byTraffic = 'o.monthly_visits DESC, o.id DESC';
  let from = 'outlets o';
  let order: string;
  switch (sort) {
    case 'relevance':
      order = tier === '0' ? byTraffic : `${tier}, ${byTraffic}`;
      break;
    case '-traffic':
      order = byTraffic;
      break;
    case 'traffic':
      order = 'o.monthly_visits ASC, o.id ASC';
      break;
    case 'price':
      order = `${price} ASC, o.id ASC`;
      break;
    case '-price':
      order = `${price} DESC, o.id DESC`;
      break;
    default: {
      const r = RATED[sort];
      from = `outlets o LEFT JOIN LATERAL (SELECT ${r.figures} FROM orders r WHERE r.outlet_id = o.id AND ${r.checked}) k ON true`;
      order = `(k.n > 0) DESC, ${r.order}, ${byTraffic}`;
    }
  }
  const cond = where.join(' AND ');
  const { rows: count } = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM outlets o WHERE ${cond}`, values);
  const { rows } = await pool.query<{ id: number }>(
    `SELECT o.id FROM ${from} WHERE ${cond} ORDER BY ${order} OFFSET ${p(offset)} LIMIT ${p(limit)}`,
    values,
  );
  return { total: count[0]!.n, ids: rows.map((r) => r.id) };
}
