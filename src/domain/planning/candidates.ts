import type pg from 'pg';
import type { OfferFormat } from '../outlets/enums.js';
import { outletColumns, type OfferRow, type OutletRow, trackRecordJoin } from '../outlets/outlet-view.js';
import {
  AUDIENCE_FACTOR,
  MATCH_STRENGTH,
  TRAFFIC_LOG_CAP,
  TRAFFIC_VERIFIED_BONUS,
  UNKNOWN_TRACK_RECORD,
  WEIGHTS,
  type WordMatch,
} from './score.js';
import { lexemesOfWord, lookupTerms } from '../outlets/search-terms.js';
import { parseQuery } from '../outlets/search-text.js';

/** Outlets the knapsack chooses among (each with its matching offers). */
export const CANDIDATE_LIMIT = 200;
/** Outlets matching a word that get the exact score (pre-ranked by topics overlap and quality). */
export const RELEVANT_POOL = 1_000;
/** Without a text match, this many outlets by traffic (from the traffic index) are scored. */
export const FALLBACK_POOL = 1_000;
/** Distinct words of goal + audience looked up (English stop words do not count). */
export const MAX_TERMS = 16;
/** Offers per outlet considered (an import allows at most 20). */
export const MAX_OFFERS_PER_OUTLET = 20;

/** How candidates are chosen, for the API description and docs/planner.md. */
export const SELECTION_SUMMARY =
  `Candidates: outlets matching any word of the goal or audience as outlet search reads a word (English stop words dropped; ` +
  `the word, its English stem and its singular or plural; a word the catalog does not use also as its nearest catalog words, ` +
  `so a typo still finds), in one of \`countries\` and \`languages\`, with an active offer of one of \`formats\` within the budget. ` +
  `The ${RELEVANT_POOL.toLocaleString('en-US')} best of them by a quick pre-rank ` +
  `(topics overlap, traffic, stored track record) get the exact outlet-level score, and the best ${CANDIDATE_LIMIT} of those, ` +
  `with up to ${MAX_OFFERS_PER_OUTLET} matching offers each, go to the optimiser. When no outlet matches a word, the ` +
  `${FALLBACK_POOL.toLocaleString('en-US')} outlets with most traffic that pass the same filters are ranked by quality instead, ` +
  `and \`message\` says so.`;

export interface CandidateQuery {
  goal: string;
  audience?: string | undefined;
  budgetCents: number;
  countries?: string[] | undefined;
  formats?: OfferFormat[] | undefined;
  /** ISO 639-1 codes, lower case. */
  languages?: string[] | undefined;
}

export interface Candidate {
  outlet: OutletRow;
  /** Matched words of goal/audience; empty when nothing matched (fallback ranking). */
  matches: WordMatch[];
  offers: OfferRow[];
}

export interface CandidateSet {
  candidates: Candidate[];
  /** False when no outlet matched a word of the goal, so the set is ranked by quality only. */
  textMatched: boolean;
}

/**
 * A word and its naive singular/plural forms. Names and topics are indexed without stemming
 * ('simple'), and the search's forms are the word and its English stem, so "families" (stem
 * "famili") would miss the topic "family" and "hotel" the topic "hotels". Extra forms that are
 * not words match nothing.
 */
export function formsOf(word: string): string[] {
  const forms = [word];
  if (word.length > 3 && word.endsWith('ies')) forms.push(`${word.slice(0, -3)}y`);
  else if (word.length > 3 && word.endsWith('es')) forms.push(word.slice(0, -2), word.slice(0, -1));
  else if (word.length > 2 && word.endsWith('s') && !word.endsWith('ss')) forms.push(word.slice(0, -1));
  else if (/[^aeiou]y$/.test(word)) forms.push(`${word.slice(0, -1)}ies`);
  else forms.push(`${word}s`);
  return forms;
}

export interface Term {
  /** The word as the caller wrote it (lower-cased), named in `why`. */
  word: string;
  fromAudience: boolean;
  /** The word and its singular/plural forms. */
  forms: string[];
}

/**
 * The distinct words of goal, then audience, as outlet search reads a search box (its tokens,
 * lower-cased, stop words dropped, at most its word limit per text), but as alternatives: quotes
 * make no phrase, single characters are dropped (in an OR they would match at random), and a
 * word that is a form of an earlier one (hotel/hotels) is merged into it; at most MAX_TERMS.
 */
export function termsOf(goal: string, audience?: string): Term[] {
  const terms: Term[] = [];
  const seen = new Set<string>();
  const add = (word: string, fromAudience: boolean) => {
    if (word.length < 2 || terms.length >= MAX_TERMS) return;
    const forms = formsOf(word);
    if (forms.some((f) => seen.has(f))) return;
    forms.forEach((f) => seen.add(f));
    terms.push({ word, fromAudience, forms });
  };
  const wordsOf = (text: string) => parseQuery(text.replaceAll('"', ' ')).words.map((w) => w.text);
  wordsOf(goal).forEach((w) => add(w, false));
  if (audience) wordsOf(audience).forEach((w) => add(w, true));
  return terms;
}

/** A term with the lexemes it matches in the full-text index. */
export interface LookedUpTerm extends Term {
  lexemes: string[];
}

/**
 * Each term's lexemes, from the search's own lookup (search_terms: forms, and corrections of a
 * word the catalog does not use), with the term's singular/plural added. One statement.
 */
export async function lookUpTerms(pool: pg.Pool, terms: Term[]): Promise<LookedUpTerm[]> {
  const looked = await lookupTerms(pool, terms.map((t) => t.word));
  return terms.map((t, i) => ({ ...t, lexemes: [...new Set([...lexemesOfWord(looked[i]!), ...t.forms])] }));
}

/** A lexeme as a tsquery operand: quoted, so any character in it is text, never an operator. */
const quoted = (l: string) => `'${l.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;

/** Lexemes OR'ed into tsquery text, optionally restricted to one weight. */
function anyOf(lexemes: string[], weight = ''): string {
  return lexemes.map((l) => `${quoted(l)}${weight ? `:${weight}` : ''}`).join(' | ');
}

const f8 = (x: number) => `${x}::float8`;

// The outlet-level part of the score (score.ts) in SQL, on an outlet named `o`.
const trafficSql = `${f8(1 - TRAFFIC_VERIFIED_BONUS)} * least(1, log(o.monthly_visits::float8 + 1) / ${TRAFFIC_LOG_CAP})
    + CASE WHEN o.traffic_verified THEN ${f8(TRAFFIC_VERIFIED_BONUS)} ELSE 0 END`;
// (The stored baseline: the pre-rank does not aggregate orders; final scores use the live record.)
const trackSql = `COALESCE(
    (COALESCE(o.base_on_time_rate::float8, 0) + COALESCE(o.base_acceptance_rate::float8, 0) + COALESCE(o.base_rating::float8 / 5, 0))
    / NULLIF((o.base_on_time_rate IS NOT NULL)::int + (o.base_acceptance_rate IS NOT NULL)::int + (o.base_rating IS NOT NULL)::int, 0),
    ${f8(UNKNOWN_TRACK_RECORD)})`;
const qualitySql = `${f8(WEIGHTS.traffic)} * (${trafficSql}) + ${f8(WEIGHTS.trackRecord)} * (${trackSql})`;

/**
 * The statement and its parameters (exported for EXPLAIN in benchmarks). Every term's tsqueries
 * are parameters, so the planner (unnamed statement, custom plan) sees them and estimates the
 * full-text match from the column's statistics.
 */
export function candidateStatement(q: CandidateQuery, terms: LookedUpTerm[]): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const param = (v: unknown) => `$${values.push(v)}`;
  const tsq = (lexemes: string[], weight = '') => `${param(anyOf(lexemes, weight))}::tsquery`;
  const countries = param(q.countries?.length ? q.countries : null);
  const languages = param(q.languages?.length ? q.languages : null);
  const budget = param(q.budgetCents);
  const offerFormats = param(q.formats?.length ? q.formats : null);
  // Countries, languages, and an active offer of an allowed format within the budget (the
  // outlet's cheapest-offer columns; column names come from the fixed format list, never from
  // input text).
  const priced = priceColumns(q.formats).map((c) => `${c} <= ${budget}`);
  const filters = `(${countries}::bpchar[] IS NULL OR o.country = ANY(${countries}::bpchar[]))
      AND (${languages}::bpchar[] IS NULL OR o.language = ANY(${languages}::bpchar[]))
      AND (${priced.join(' OR ')})`;

  const perTerm = terms.map((t) => ({ t, any: tsq(t.lexemes), a: tsq(t.lexemes, 'A'), b: tsq(t.lexemes, 'B') }));
  const where = perTerm.map(
    (x) => `CASE WHEN o.search_vector @@ ${x.a} THEN 'name' WHEN o.search_vector @@ ${x.b} THEN 'topics'
            WHEN o.search_vector @@ ${x.any} THEN 'description' END`,
  );
  const relevance = perTerm.length
    ? `1 - ${perTerm
        .map((x) => {
          const k = x.t.fromAudience ? AUDIENCE_FACTOR : 1;
          return `(1 - CASE WHEN (o.search_vector @@ ${x.any}) IS NOT TRUE THEN 0 WHEN o.search_vector @@ ${x.a} THEN ${f8(MATCH_STRENGTH.A * k)}
              WHEN o.search_vector @@ ${x.b} THEN ${f8(MATCH_STRENGTH.B * k)} ELSE ${f8(MATCH_STRENGTH.C * k)} END)`;
        })
        .join(' * ')}`
    : '0';
  // A goal's words are alternatives: an outlet matching any one of them is a candidate.
  const allLexemes = [...new Set(terms.flatMap((t) => t.lexemes))];
  const anyTerm = allLexemes.length ? tsq(allLexemes) : null;

  // Two steps bound the per-word work however many outlets match: a cheap pre-rank (topics
  // overlap instead of per-word lookups, plus quality) keeps RELEVANT_POOL outlets, then the
  // exact outlet-level score ranks those. Ranking carries ids and scores only; the wide rows are
  // read for the final candidates.
  // Bound only when the statement uses it: a goal with no searchable word has no `relevant` step.
  const topicForms = anyTerm ? param(allLexemes) : null;
  const relevant = anyTerm
    ? `WITH pool AS MATERIALIZED (
         SELECT o.id FROM outlets o
          WHERE o.search_vector @@ ${anyTerm} AND ${filters}
          ORDER BY ${f8(WEIGHTS.relevance)}
                     * CASE WHEN o.topics && ${topicForms}::text[] THEN ${f8(MATCH_STRENGTH.B)} ELSE ${f8(MATCH_STRENGTH.C)} END
                   + ${qualitySql} DESC, o.id
          LIMIT ${RELEVANT_POOL})
       SELECT o.id, ${f8(WEIGHTS.relevance)} * (${relevance}) + ${qualitySql} AS pre
         FROM pool JOIN outlets o ON o.id = pool.id
        ORDER BY pre DESC, o.id
        LIMIT ${CANDIDATE_LIMIT}`
    : `SELECT 0 AS id, 0::float8 AS pre WHERE false`;
  const text = `
    WITH relevant AS MATERIALIZED (${relevant}),
    fallback AS (
      SELECT o.id, ${qualitySql} AS pre
        FROM outlets o
       WHERE o.id IN (SELECT o.id FROM outlets o
                       WHERE NOT EXISTS (SELECT 1 FROM relevant) AND ${filters}
                       ORDER BY o.monthly_visits DESC NULLS LAST, o.id DESC NULLS LAST -- the traffic index order
                       LIMIT ${FALLBACK_POOL})
       ORDER BY pre DESC, o.id
       LIMIT ${CANDIDATE_LIMIT}
    ), cand AS (
      SELECT * FROM relevant UNION ALL SELECT * FROM fallback
    )
    SELECT ${outletColumns}, c.pre, ARRAY[${where.join(', ') || 'NULL'}]::text[] AS matched,
      (SELECT COALESCE(json_agg(f ORDER BY f.price, f.id), '[]'::json)
         FROM (SELECT f.id, f.outlet_id, f.format, f.title, f.price, f.turnaround_days, f.content_by, f.min_words, f.max_words,
                      f.max_links, f.link_type, f.sponsored_label, f.permanent, f.active
                 FROM offers f
                WHERE f.outlet_id = o.id AND f.active AND f.price <= ${budget}
                  AND (${offerFormats}::text[] IS NULL OR f.format::text = ANY(${offerFormats}::text[]))
                ORDER BY f.price, f.id
                LIMIT ${MAX_OFFERS_PER_OUTLET}) f) AS offers
      FROM cand c JOIN outlets o ON o.id = c.id
      ${trackRecordJoin}
     ORDER BY c.pre DESC, o.id`;
  return { text, values };
}

interface CandidateDbRow extends OutletRow {
  pre: number;
  matched: (WordMatch['where'] | null)[];
  offers: OfferRow[];
}

/**
 * The bounded candidate set for a plan, in one round trip:
 * - relevant: outlets whose search_vector (GIN index) matches a term, in `countries` and
 *   `languages`, with an active offer of an allowed format within the budget, ranked by the
 *   outlet-level score, first CANDIDATE_LIMIT;
 * - fallback, only when no outlet matched: the FALLBACK_POOL outlets with most traffic that pass
 *   the same filters (traffic index), ranked by quality, first CANDIDATE_LIMIT;
 * - per candidate, where each term matched and its allowed active offers within the budget.
 */
export async function fetchCandidates(pool: pg.Pool, q: CandidateQuery, terms: LookedUpTerm[]): Promise<CandidateSet> {
  const { rows } = await pool.query<CandidateDbRow>(candidateStatement(q, terms));
  const candidates = rows.map(({ pre: _pre, matched, offers, ...outlet }) => ({
    outlet,
    matches: terms.flatMap((t, i) => {
      const where = matched[i];
      return where ? [{ word: t.word, where, fromAudience: t.fromAudience }] : [];
    }),
    offers,
  }));
  return { candidates, textMatched: candidates.some((c) => c.matches.length > 0) };
}

const PRICE_COLUMN: Record<OfferFormat, string> = {
  guest_post: 'o.min_price_guest_post',
  sponsored_article: 'o.min_price_sponsored_article',
  link_insertion: 'o.min_price_link_insertion',
  press_release: 'o.min_price_press_release',
};

/** The outlets columns holding the cheapest active offer of each allowed format (or of any). */
function priceColumns(formats: readonly OfferFormat[] | undefined): string[] {
  return formats?.length ? [...new Set(formats)].map((f) => PRICE_COLUMN[f]) : ['o.min_price_any'];
}

/**
 * The cheapest active offer honouring countries, languages and formats, at any price (for the
 * message of an empty plan). One index probe per format on that format's cheapest-offer column.
 */
export async function cheapestMatchingOffer(
  pool: pg.Pool,
  q: Pick<CandidateQuery, 'countries' | 'formats' | 'languages'>,
): Promise<number | null> {
  const probes = priceColumns(q.formats).map(
    (c) => `(SELECT ${c} FROM outlets o WHERE ${c} IS NOT NULL AND ($1::bpchar[] IS NULL OR o.country = ANY($1::bpchar[]))
               AND ($2::bpchar[] IS NULL OR o.language = ANY($2::bpchar[]))
              ORDER BY ${c} LIMIT 1)`,
  );
  const { rows } = await pool.query<{ cheapest: number | null }>(`SELECT LEAST(${probes.join(', ')}) AS cheapest`, [
    q.countries?.length ? q.countries : null,
    q.languages?.length ? q.languages : null,
  ]);
  return rows[0]?.cheapest ?? null;
}
