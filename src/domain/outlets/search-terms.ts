import type { Db } from '../../db/handle.js';
import { LRUCache } from 'lru-cache';
import { MAX_WORD_LENGTH } from './search-text.js';

export interface TermsOfWord {
  /** The word and its English stem: the forms it matches as typed. */
  forms: string[];
  /**
   * Whether the catalog uses the word (or its stem): a word with a digit always counts as known
   * (numbers and domain labels are not corrected).
   */
  known: boolean;
  /**
   * For a word the catalog does not use: the terms closest to it by edit distance (at most 1 for
   * words of up to 4 letters, 2 from 5: two letters swapped are 2), all those of the smallest
   * distance found, at most MAX_NEAR.
   */
  near: string[];
}

const MAX_NEAR = 8;

/**
 * The catalog's words as this process's search index holds them (the alphabetic lexemes of
 * search_vector, as search_terms does): when it is loaded, a known word and the completions of
 * the last word need no round trip to PostgreSQL.
 */
export interface Vocabulary {
  knows(term: string): boolean;
  /** The words starting with `prefix` (not itself), shortest first, then alphabetically; at most `max`. */
  completions(prefix: string, max: number): string[];
}

/** A word's forms (itself and its English stem) do not depend on the catalog: kept for good, up to 10,000 words. */
const formsOf = new LRUCache<string, string[]>({ max: 10_000 });

function fromVocabulary(words: string[], vocabulary: Vocabulary): TermsOfWord[] | undefined {
  const found: TermsOfWord[] = [];
  for (const w of words) {
    const forms = formsOf.get(w);
    if (!forms) return undefined;
    const known = /\d/.test(w) || forms.some((f) => vocabulary.knows(f));
    // An unknown word needs its corrections, which PostgreSQL finds.
    if (!known) return undefined;
    found.push({ forms, known, near: [] });
  }
  return found;
}

/** At most this many completions of the last word. */
export const MAX_COMPLETIONS = 20;

// A word's forms and corrections, and a prefix's completions, remembered for a second (a new word
// in the catalog makes a known word of a typo's correction at most that late), for at most 10,000
// words each, least recently used out first.
const remembered = { max: 10_000, ttl: 1_000 } as const;

/**
 * The catalog's words as PostgreSQL holds them (search_terms), read through one pool with what
 * was read in the last second remembered: the search engine makes one for its pool, and the
 * planner reads through the engine's.
 */
export class SearchTerms {
  private readonly recent = new LRUCache<string, TermsOfWord>(remembered);
  private readonly recentCompletions = new LRUCache<string, string[]>(remembered);

  constructor(private readonly pool: Db) {}

  /**
   * The forms of each word, whether the catalog knows it (search_terms, kept by a trigger on
   * outlets) and, when it does not, the nearest terms. One statement for all words; the candidates
   * of a correction are the terms of about the same length (an index range), so the cost grows with
   * the vocabulary, not with the number of outlets.
   */
  async lookup(words: string[], vocabulary?: Vocabulary): Promise<TermsOfWord[]> {
    if (words.length === 0) return [];
    const known = vocabulary && fromVocabulary(words, vocabulary);
    if (known) return known;
    const cached = words.map((w) => this.recent.get(w));
    const missing = words.filter((_, i) => !cached[i]);
    if (missing.length === 0) return cached as TermsOfWord[];
    const looked = await lookup(this.pool, missing);
    missing.forEach((w, i) => {
      this.recent.set(w, looked[i]!);
      formsOf.set(w, looked[i]!.forms);
    });
    let j = 0;
    return cached.map((c) => c ?? looked[j++]!);
  }

  /**
   * The catalog's words that start with `word` (the last word typed, which may be unfinished),
   * shortest first: explicit lexemes, so neither PostgreSQL nor the search index scans every lexeme
   * with that prefix (at 1M outlets a short prefix starts tens of thousands of domain labels).
   */
  async completions(word: string, vocabulary?: Vocabulary): Promise<string[]> {
    if (vocabulary) return vocabulary.completions(word, MAX_COMPLETIONS);
    const key = `\u0000${word}`;
    const hit = this.recentCompletions.get(key);
    if (hit) return hit;
    const { rows } = await this.pool.query<{ term: string }>({
      name: 'search_terms_completing',
      text: `SELECT term FROM search_terms WHERE term LIKE $1 AND term <> $2 ORDER BY length(term), term LIMIT ${MAX_COMPLETIONS}`,
      // The word is letters and digits only: nothing in it is a LIKE wildcard.
      values: [`${word}%`, word],
    });
    const terms = rows.map((r) => r.term);
    this.recentCompletions.set(key, terms);
    return terms;
  }
}

/**
 * Per word ($1, text[]): its forms, whether the catalog knows it, and for an unknown word the
 * nearest terms. The correction's condition (an unknown word of 3 letters or more) sits inside
 * its subquery, where PostgreSQL tests it once per word before scanning anything: as the join's
 * condition it was tested after the scan, so every word, known or not, paid for comparing itself
 * with every term of about its length (64 ms a word at 1,000,000 outlets, bench/RESULTS.md).
 */
export const TERMS_OF_WORDS = `WITH w AS (
             SELECT w.word, w.i, ARRAY(SELECT DISTINCT f FROM unnest(ARRAY[w.word, (ts_lexize('english_stem', w.word))[1]]) f
                                        WHERE f IS NOT NULL AND f <> '') AS forms,
                    CASE WHEN length(w.word) <= 4 THEN 1 ELSE 2 END AS k
               FROM unnest($1::text[]) WITH ORDINALITY AS w(word, i))
           SELECT w.forms, e.known, n.near, n.distance
             FROM w
            CROSS JOIN LATERAL (SELECT w.word ~ '[[:digit:]]' OR EXISTS (SELECT 1 FROM search_terms t WHERE t.term = ANY(w.forms)) AS known) e
             LEFT JOIN LATERAL (
               SELECT array_agg(c.term ORDER BY c.d, c.term) AS near, array_agg(c.d ORDER BY c.d, c.term) AS distance
                 FROM (SELECT t.term, levenshtein_less_equal(t.term, w.word, w.k) AS d
                         FROM search_terms t
                        WHERE NOT e.known AND length(w.word) BETWEEN 3 AND ${MAX_WORD_LENGTH - 1}
                          AND length(t.term) BETWEEN length(w.word) - w.k AND length(w.word) + w.k) c
                WHERE c.d <= w.k
             ) n ON true
            ORDER BY w.i`;

/** The lookup of `words` as one named statement (also sent ahead on each new connection: search-connections.ts). */
export const termsStatement = (words: string[]) => ({ name: 'search_terms_of_words', text: TERMS_OF_WORDS, values: [words] });

async function lookup(pool: Db, words: string[]): Promise<TermsOfWord[]> {
  const { rows } = await pool.query<{ forms: string[]; known: boolean; near: string[] | null; distance: number[] | null }>(termsStatement(words));
  return rows.map((r) => {
    const best = r.distance?.[0];
    return { forms: r.forms.length ? r.forms : [], known: r.known, near: (r.near ?? []).filter((_, j) => r.distance![j] === best).slice(0, MAX_NEAR) };
  });
}

/**
 * The lexemes a looked-up word matches: its forms, and for a word the catalog does not use, its
 * nearest terms before them (its own forms stay: the word may have reached the catalog since).
 */
export function lexemesOfWord(t: TermsOfWord): string[] {
  return t.known ? t.forms : [...new Set([...t.near, ...t.forms])];
}
