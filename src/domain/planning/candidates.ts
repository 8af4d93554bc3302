import type { Db } from '../../db/handle.js';
import type { OfferFormat } from '../outlets/enums.js';
import { outletColumns, type OfferRow, type OutletRow, trackRecordJoin } from '../outlets/outlet-view.js';
import type { SearchEngine } from '../outlets/search-engine.js';
import type { SearchFilter } from '../outlets/search-filter.js';
import type { OutletFigures, SearchIndex } from '../outlets/search-index.js';
import { WordsQuery } from '../outlets/search-words.js';
import { MATCH_STRENGTH, relevancePart, trafficPart, UNKNOWN_TRACK_RECORD, WEIGHTS, type WordMatch } from './score.js';
import { lexemesOfWord, type SearchTerms, type Vocabulary } from '../outlets/search-terms.js';
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
export async function lookUpTerms(searchTerms: SearchTerms, terms: Term[], vocabulary?: Vocabulary): Promise<LookedUpTerm[]> {
  const looked = await searchTerms.lookup(terms.map((t) => t.word), vocabulary);
  return terms.map((t, i) => ({ ...t, lexemes: [...new Set([...lexemesOfWord(looked[i]!), ...t.forms])] }));
}

/**
 * A candidate's pre-rank (the outlet-level score without the live track record, which would need
 * its orders): relevance, traffic, and the stored baseline track record.
 */
function quality(f: OutletFigures): number {
  const known = [f.onTime, f.acceptance, f.rating === null ? null : f.rating / 5].filter((v): v is number => v !== null);
  const track = known.length ? known.reduce((a, b) => a + b, 0) / known.length : UNKNOWN_TRACK_RECORD;
  return WEIGHTS.traffic * trafficPart(f.visits, f.verified) + WEIGHTS.trackRecord * track;
}

/** The best `n` by score (highest first, then the lowest id). */
function best<T extends { pre: number; id: number }>(xs: T[], n: number): T[] {
  return xs.sort((a, b) => b.pre - a.pre || a.id - b.id).slice(0, n);
}

interface Ranked {
  id: number;
  pre: number;
  matches: WordMatch[];
}

/**
 * The candidates' ids, from the search engine's index (the same matching and filters as outlet
 * search, so nothing here writes the caller's words into SQL):
 * - relevant: outlets matching any term, in `countries` and `languages`, with an active offer of
 *   an allowed format within the budget; the RELEVANT_POOL best by a cheap pre-rank (topics
 *   overlap and quality), then ranked by relevance (where each term matched) and quality, first
 *   CANDIDATE_LIMIT;
 * - fallback, only when no outlet matched: the FALLBACK_POOL outlets with most traffic that pass
 *   the same filters, ranked by quality, first CANDIDATE_LIMIT.
 */
function rankCandidates(index: SearchIndex, q: CandidateQuery, terms: LookedUpTerm[]): Ranked[] {
  const filter: SearchFilter = { countries: q.countries, languages: q.languages, formats: q.formats, maxPriceCents: q.budgetCents };
  const query = new WordsQuery(index, filter, terms.map((t) => t.lexemes));
  const relevant = query.matching();
  if (relevant.length === 0) {
    const top = query.mostTraffic(FALLBACK_POOL).map(({ figures: f }) => ({ id: f.id, pre: quality(f), matches: [] }));
    return best(top, CANDIDATE_LIMIT);
  }
  const slugs = () => [...new Set(terms.flatMap((t) => t.lexemes))];
  const pool = best(
    relevant.map((outlet) => {
      const f = outlet.figures;
      return { outlet, id: f.id, pre: WEIGHTS.relevance * (query.inTopics(outlet, slugs) ? MATCH_STRENGTH.B : MATCH_STRENGTH.C) + quality(f), q: quality(f) };
    }),
    RELEVANT_POOL,
  );
  const ranked = pool.map(({ outlet, id, q: qual }) => {
    const matches = terms.flatMap((t, i): WordMatch[] => {
      const where = query.placeOf(outlet, i);
      return where ? [{ word: t.word, where, fromAudience: t.fromAudience }] : [];
    });
    return { id, pre: WEIGHTS.relevance * relevancePart(matches) + qual, matches };
  });
  return best(ranked, CANDIDATE_LIMIT);
}

/** The candidates' rows in order, each with its allowed active offers within the budget. */
const rowsStatement = `
  SELECT ${outletColumns},
    (SELECT COALESCE(json_agg(f ORDER BY f.price, f.id), '[]'::json)
       FROM (SELECT f.id, f.outlet_id, f.format, f.title, f.price, f.turnaround_days, f.content_by, f.min_words, f.max_words,
                    f.max_links, f.link_type, f.sponsored_label, f.permanent, f.active
               FROM offers f
              WHERE f.outlet_id = o.id AND f.active AND f.price <= $2
                AND ($3::text[] IS NULL OR f.format::text = ANY($3::text[]))
              ORDER BY f.price, f.id
              LIMIT ${MAX_OFFERS_PER_OUTLET}) f) AS offers
    FROM unnest($1::int[]) WITH ORDINALITY AS c(id, ord)
    JOIN outlets o ON o.id = c.id
    ${trackRecordJoin}
   ORDER BY c.ord`;

interface CandidateDbRow extends OutletRow {
  offers: OfferRow[];
}

/** The bounded candidate set for a plan: chosen in the search index, then their rows in one round trip. */
export async function fetchCandidates(pool: Db, engine: SearchEngine, q: CandidateQuery, terms: LookedUpTerm[]): Promise<CandidateSet> {
  const ranked = rankCandidates(engine.current(), q, terms);
  if (ranked.length === 0) return { candidates: [], textMatched: false };
  const { rows } = await pool.query<CandidateDbRow>({
    name: 'plan_candidates',
    text: rowsStatement,
    values: [ranked.map((r) => r.id), q.budgetCents, q.formats?.length ? q.formats : null],
  });
  const byId = new Map(rows.map((r) => [r.id, r]));
  // An outlet deleted since the index read it is left out.
  const candidates = ranked.flatMap((r) => {
    const row = byId.get(r.id);
    if (!row) return [];
    const { offers, ...outlet } = row;
    return [{ outlet, matches: r.matches, offers }];
  });
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
  pool: Db,
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
