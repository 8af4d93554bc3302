import { describe, expect, it } from 'vitest';
import { mulberry32, generateOutlets, runDomainTag } from '../../../src/demo/outlet-generator.js';
import { upsertOutlets } from '../../../src/domain/outlets/outlet-upsert.js';
import type { SearchIndex } from '../../../src/domain/outlets/search-index.js';
import { createPublisher } from '../../../src/domain/publishers/publisher-service.js';
import { outletInput } from '../../helpers/catalog.js';
import { createTestDatabase } from '../../helpers/db.js';
import { engineOver } from '../../helpers/search-engine.js';

// The last word of a search is completed from the index's words (the shortest first): the same
// words, in the same order, as the catalog's own list of words (search_terms) gives, and a word
// written after the load is completed at once, even where the same prefix was completed before.

const database = await createTestDatabase();
const pub = await createPublisher(database.pool, 'Completions publisher');
await upsertOutlets(database.pool, pub.id, generateOutlets(3_000, 9, { domainTag: runDomainTag(pub.id, 9) }), 0.2);
const engine = engineOver(database);

const MAX = 20;
const bySql = async (prefix: string) =>
  (
    await database.pool.query<{ term: string }>(
      `SELECT term FROM search_terms WHERE left(term, length($1)) = $1 AND term <> $1 ORDER BY length(term), term COLLATE "C" LIMIT ${MAX}`,
      [prefix],
    )
  ).rows.map((r) => r.term);

describe('completions of the last word', () => {
  it('are the catalog’s shortest words with the prefix, as its word list orders them', async () => {
    await engine.catchUp();
    const index = engine.loaded as SearchIndex;
    const { rows } = await database.pool.query<{ term: string }>('SELECT term FROM search_terms WHERE length(term) >= 3 ORDER BY term');
    expect(rows.length).toBeGreaterThan(500);
    const rnd = mulberry32(4);
    let many = 0;
    for (let i = 0; i < 300; i++) {
      const term = rows[Math.floor(rnd() * rows.length)]!.term;
      const prefix = term.slice(0, 3 + Math.floor(rnd() * (term.length - 2)));
      const expected = await bySql(prefix);
      if (expected.length === MAX) many++;
      expect(index.completions(prefix, MAX), prefix).toEqual(expected);
    }
    // Some prefixes start more words than are kept: the choice of the shortest is tested too.
    expect(many).toBeGreaterThan(10);
  });

  it('include a word written after the load, where the prefix was completed before', async () => {
    const index = () => engine.loaded as SearchIndex;
    expect(index().completions('zorb', MAX)).toEqual([]);
    await upsertOutlets(database.pool, pub.id, [outletInput('zorblax-weekly.example', { name: 'Zorblax Weekly' })], 0.2);
    await engine.catchUp();
    expect(await bySql('zorb')).toEqual(['zorblax']);
    expect(index().completions('zorb', MAX)).toEqual(['zorblax']);
  });
});
