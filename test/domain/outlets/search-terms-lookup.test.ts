import { afterAll, describe, expect, it } from 'vitest';
import { generateOutlets, runDomainTag } from '../../../src/demo/outlet-generator.js';
import { upsertOutlets } from '../../../src/domain/outlets/outlet-upsert.js';
import { SearchTerms, TERMS_OF_WORDS } from '../../../src/domain/outlets/search-terms.js';
import { createPublisher } from '../../../src/domain/publishers/publisher-service.js';
import { createTestDatabase } from '../../helpers/db.js';

// Issue 56: the words' lookup compared every word, known or not, with every catalog term of about
// its length (the correction's scan), and only then dropped the result for a known word: 64 ms a
// word at 1,000,000 outlets, so each new word of the first searches waited that long, and reading
// the common words ahead at start ran into the statement timeout. The plan PostgreSQL runs shows
// it without timing anything: how many times the scan that computes edit distances ran.
const database = await createTestDatabase();
const pub = await createPublisher(database.pool, 'Terms publisher');
await upsertOutlets(database.pool, pub.id, generateOutlets(200, 5, { domainTag: runDomainTag(pub.id, 5) }), 0.2);
afterAll(() => database.drop());

interface PlanNode {
  'Node Type': string;
  Filter?: string;
  'Actual Loops'?: number;
  Plans?: PlanNode[];
}

/** How many times a plan node comparing edit distances (levenshtein) ran, for the words given. */
async function correctionScans(words: string[]): Promise<number> {
  const { rows } = await database.pool.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${TERMS_OF_WORDS}`, [words]);
  let loops = 0;
  const visit = (n: PlanNode) => {
    if (n.Filter?.includes('levenshtein')) loops += n['Actual Loops'] ?? 0;
    n.Plans?.forEach(visit);
  };
  visit(rows[0]!['QUERY PLAN'][0].Plan);
  return loops;
}

/** A word the catalog uses (its forms in search_terms). */
async function knownWord(): Promise<string> {
  const { rows } = await database.pool.query<{ term: string }>(`SELECT term FROM search_terms WHERE term ~ '^[a-z]{5,}$' ORDER BY term LIMIT 1`);
  return rows[0]!.term;
}

describe("the words' lookup", () => {
  it('compares no known word with the catalog terms; an unknown word still is', async () => {
    const known = await knownWord();
    expect(await correctionScans([known])).toBe(0);
    expect(await correctionScans([known, '42nd'])).toBe(0);
    // The same statement does scan for a misspelling: the count above is not blind.
    const typo = `${known}qz`;
    expect(await correctionScans([typo])).toBeGreaterThan(0);
    expect(await correctionScans([known, typo])).toBe(1);
  });

  it('still corrects an unknown word and leaves known ones as they are', async () => {
    const known = await knownWord();
    const typo = `${known.slice(0, 2)}${known[3]}${known[2]}${known.slice(4)}`; // two letters swapped
    const terms = new SearchTerms(database.pool);
    const [k, t, short] = await terms.lookup([known, typo, 'zq']);
    expect(k).toEqual({ forms: expect.arrayContaining([known]), known: true, near: [] });
    expect(t!.known).toBe(false);
    expect(t!.near).toContain(known);
    // Two letters are too short to correct.
    expect(short).toEqual({ forms: ['zq'], known: false, near: [] });
  });
});
