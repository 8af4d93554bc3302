import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { outletSorts, outletTypes } from '../../../src/domain/outlets/enums.js';
import { upsertOutlets } from '../../../src/domain/outlets/outlet-upsert.js';
import type { OutletInput } from '../../../src/domain/outlets/outlet-input.js';
import { SearchEngine } from '../../../src/domain/outlets/search-engine.js';
import type { SearchIndex } from '../../../src/domain/outlets/search-index.js';
import { OutletQuery } from '../../../src/domain/outlets/search-query.js';
import type { SearchFilter } from '../../../src/domain/outlets/search-filter.js';
import { createPublisher } from '../../../src/domain/publishers/publisher-service.js';
import { offerInput, outletInput } from '../../helpers/catalog.js';
import { createTestDatabase } from '../../helpers/db.js';
import { oracle } from '../../helpers/search-oracle.js';

// The search engine against a brute-force SQL scan (test/helpers/search-oracle.ts), as a
// property: over generated catalogs whose names and descriptions share a small vocabulary (so
// words and phrases collide, in and out of order), a generated query — words, a quoted phrase, a
// prefix, a typo, any filters, any sort and page — gets the total and the page the scan gets.

const database = await createTestDatabase();
const engine = new SearchEngine(database.pool);
engine.start();
afterAll(async () => {
  await engine.close();
  await database.drop();
});

const VOCABULARY = ['red', 'river', 'blue', 'mountain', 'news', 'travel', 'daily', 'garden', 'rocky', 'coast', 'the', 'of'];
// Words few outlets have: a search with one of them takes the index's listed way (its candidates
// are that word's few slots, each tested against the other words and the filters).
const RARE = ['quokka', 'zephyr', 'yonder', 'walrus'];
const TOPICS = ['travel', 'finance', 'gardening', 'news'];
const COUNTRIES = ['US', 'DE', 'FR'];
const LANGUAGES = ['en', 'de'];
const FORMATS = ['guest_post', 'sponsored_article', 'link_insertion'] as const;

const words = (min: number, max: number) => fc.array(fc.constantFrom(...VOCABULARY), { minLength: min, maxLength: max }).map((w) => w.join(' '));
/** Broad words, and now and then (one in 400) a rare one. */
const someRare = (min: number, max: number) =>
  fc
    .array(fc.oneof({ weight: 399, arbitrary: fc.constantFrom(...VOCABULARY) }, { weight: 1, arbitrary: fc.constantFrom(...RARE) }), { minLength: min, maxLength: max })
    .map((w) => w.join(' '));

const outletArb = fc.record({
  name: someRare(1, 4),
  description: someRare(3, 12),
  type: fc.constantFrom(...outletTypes),
  country: fc.constantFrom(...COUNTRIES),
  language: fc.constantFrom(...LANGUAGES),
  topics: fc.uniqueArray(fc.constantFrom(...TOPICS), { minLength: 1, maxLength: 2 }),
  visits: fc.integer({ min: 0, max: 50 }).map((v) => v * 1_000),
  verified: fc.boolean(),
  offers: fc.uniqueArray(
    fc.record({ format: fc.constantFrom(...FORMATS), price: fc.integer({ min: 1, max: 20 }).map((p) => p * 2_500) }),
    { minLength: 1, maxLength: 3, selector: (o) => o.format },
  ),
});

const queryArb = fc.record({
  q: fc.option(
    fc.oneof(
      words(1, 2),
      // A phrase, alone or with a word.
      fc.tuple(words(2, 3), fc.option(words(1, 1), { nil: undefined })).map(([p, w]) => `"${p}"${w ? ` ${w}` : ''}`),
      // The start of a word (completed), or a typo.
      fc.constantFrom('mount', 'riv', 'gard', 'travl', 'mountian', 'rivr news'),
      // A rare word, alone, with a broad one, in a phrase, completed, as a typo.
      fc.tuple(fc.constantFrom(...RARE), fc.option(words(1, 1), { nil: undefined })).map(([r, w]) => (w ? `${w} ${r}` : r)),
      fc.constantFrom('"red quokka"', 'quokka "river news"', 'news zeph', 'yondr', 'walrus quokka'),
    ),
    { nil: undefined },
  ),
  type: fc.option(fc.constantFrom(...outletTypes), { nil: undefined }),
  // One country as REST and MCP ask, or two as the planner does (any of them).
  country: fc.option(fc.subarray([...COUNTRIES], { minLength: 1, maxLength: 2 }), { nil: undefined }),
  language: fc.option(fc.constantFrom(...LANGUAGES), { nil: undefined }),
  topic: fc.option(fc.constantFrom(...TOPICS), { nil: undefined }),
  format: fc.option(fc.constantFrom(...FORMATS), { nil: undefined }),
  // Between the index's price steps, and on them ($50, $100, $200, $500: an offer's price equal to
  // the bound is within it).
  maxPrice: fc.option(fc.oneof(fc.integer({ min: 1, max: 25 }).map((p) => p * 3_000), fc.constantFrom(5_000, 10_000, 20_000, 50_000)), { nil: undefined }),
  verified: fc.option(fc.boolean(), { nil: undefined }),
  minTraffic: fc.option(fc.integer({ min: 0, max: 50 }).map((v) => v * 1_000), { nil: undefined }),
  sort: fc.option(fc.constantFrom(...outletSorts), { nil: undefined }),
  page: fc.integer({ min: 1, max: 3 }),
  perPage: fc.integer({ min: 3, max: 10 }),
});

let catalogs = 0;

type GeneratedOutlet = typeof outletArb extends fc.Arbitrary<infer T> ? T : never;

async function addCatalog(outlets: GeneratedOutlet[]): Promise<void> {
  const n = ++catalogs;
  const pub = await createPublisher(database.pool, `Property publisher ${n}`);
  const items: OutletInput[] = outlets.map((o, i) =>
    outletInput(`c${n}-o${i}.example`, {
      name: o.name,
      description: o.description,
      type: o.type,
      country: o.country,
      language: o.language,
      topics: o.topics,
      traffic: { monthly_visits: o.visits, verified: o.verified },
      offers: o.offers.map((f) => offerInput({ format: f.format, publisher_price_cents: f.price, title: `Offer ${f.format}` })),
    }),
  );
  await upsertOutlets(database.pool, pub.id, items, 0.2);
  await engine.catchUp();
}

type GeneratedQuery = typeof queryArb extends fc.Arbitrary<infer T> ? T : never;

/** A generated query as the engine and the oracle take it. */
function searchOf(g: GeneratedQuery) {
  const filter: SearchFilter = {
    type: g.type,
    countries: g.country,
    languages: g.language ? [g.language] : undefined,
    topic: g.topic,
    formats: g.format ? [g.format] : undefined,
    maxPriceCents: g.maxPrice,
    verifiedTraffic: g.verified,
    minTraffic: g.minTraffic,
  };
  return { filter, sort: g.sort ?? (g.q ? 'relevance' : '-traffic'), offset: (g.page - 1) * g.perPage };
}

describe('the search engine agrees with a brute-force scan', () => {
  it('for generated catalogs and queries: every filter and sort, phrases and plain words', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(outletArb, { minLength: 20, maxLength: 60 }), fc.array(queryArb, { minLength: 40, maxLength: 40 }), async (outlets, queries) => {
        await addCatalog(outlets);
        for (const g of queries) {
          const { filter, sort, offset } = searchOf(g);
          const found = await engine.search({ q: g.q, filter, sort, offset, limit: g.perPage });
          const expected = await oracle(database.pool, { q: g.q, filter, sort }, offset, g.perPage);
          expect(found, JSON.stringify(g)).toEqual(expected);
        }
      }),
      { numRuns: 8, seed: 34 },
    );
    // Both ways were taken: a rare word's few slots listed, a broad word's bitsets.
    const index = engine.loaded as SearchIndex;
    const kind = (lexeme: string) => new OutletQuery(index, { exactName: lexeme, domain: undefined, groups: [{ lexemes: [lexeme] }] }, {}).kind;
    expect(RARE.map(kind)).toContain('slots');
    expect(kind('news')).toBe('bits');
  });

  it('the listed way with several words: a rare word\'s candidates lacking another word are left out', async () => {
    // Generated catalogs hardly ever give a rare word's outlets without the broad word asked with
    // it: here, of eight outlets with "walrus", half lack "zephyr" and most lack "mountain" in
    // their descriptions (what their names have, the oracle says).
    const broad = fc.sample(outletArb, { numRuns: 500, seed: 343 }).map((o) => ({ ...o, name: o.name.replace(/walrus|zephyr/g, 'news'), description: o.description.replace(/walrus|zephyr/g, 'news') }));
    const rare = Array.from({ length: 8 }, (_, i) => ({ ...broad[i]!, name: i % 2 ? 'red garden' : 'blue coast', description: `walrus${i % 2 ? ' zephyr' : ''} ${i % 3 ? 'coast' : 'mountain'}` }));
    await addCatalog([...broad.slice(8), ...rare]);
    const index = engine.loaded as SearchIndex;
    const both = new OutletQuery(index, { exactName: 'walrus zephyr', domain: undefined, groups: [{ lexemes: ['walrus'] }, { lexemes: ['zephyr'] }] }, {});
    expect(both.kind).toBe('slots');
    both.release();
    for (const q of ['walrus zephyr', 'zephyr walrus', 'walrus mountain', 'walrus coast', 'walrus "red garden"', 'walrus zephyr mountain']) {
      for (const filter of [{}, { countries: ['US'] }, { maxPriceCents: 30_000 }]) {
        const found = await engine.search({ q, filter, sort: 'relevance', offset: 0, limit: 10 });
        expect(found, `${q} ${JSON.stringify(filter)}`).toEqual(await oracle(database.pool, { q, filter, sort: 'relevance' }, 0, 10));
      }
    }
  });

  it('after writes from outside the service: a search asked before sees each write at once', async () => {
    // Pages and totals are remembered across writes that cannot change them (a written outlet
    // matching neither as it was nor as it is): each round asks the same searches, rewrites a few
    // outlets in plain SQL (traffic, and now and then a name), and asks them again.
    await addCatalog(fc.sample(outletArb, { numRuns: 80, seed: 342 }));
    // Broad searches (a word or none, at most one filter), so that the writes change their pages.
    const searches = fc.sample(
      fc.record({
        q: fc.option(fc.constantFrom('news', 'red', 'river travel', 'quokka', 'mount', '"red river"'), { nil: undefined }),
        country: fc.option(fc.constantFrom(...COUNTRIES).map((c) => [c]), { nil: undefined, freq: 3 }),
        type: fc.constant(undefined),
        language: fc.constant(undefined),
        topic: fc.constant(undefined),
        format: fc.constant(undefined),
        maxPrice: fc.option(fc.constantFrom(20_000, 27_000), { nil: undefined, freq: 4 }),
        verified: fc.constant(undefined),
        minTraffic: fc.option(fc.constant(20_000), { nil: undefined, freq: 4 }),
        sort: fc.option(fc.constantFrom(...outletSorts), { nil: undefined }),
        page: fc.integer({ min: 1, max: 2 }),
        perPage: fc.integer({ min: 3, max: 10 }),
      }),
      { numRuns: 40, seed: 341 },
    );
    const { rows } = await database.pool.query<{ id: number }>('SELECT id FROM outlets ORDER BY id');
    // And an engine loading the catalog as it now is: a load keeps the broad words also as bitsets.
    const loaded = new SearchEngine(database.pool);
    loaded.start();
    await loaded.catchUp();
    const ids = rows.map((r) => r.id);
    const check = async () => {
      for (const g of searches) {
        const { filter, sort, offset } = searchOf(g);
        const expected = await oracle(database.pool, { q: g.q, filter, sort }, offset, g.perPage);
        for (const e of [engine, loaded]) expect(await e.search({ q: g.q, filter, sort, offset, limit: g.perPage }), JSON.stringify(g)).toEqual(expected);
      }
    };
    await check();
    for (let round = 0; round < 6; round++) {
      // A few outlets (one in nine) get new traffic; some rounds also a new country or a rare word in the name.
      const written = ids.filter((_, i) => (i * 7 + round * 13) % 9 === 0);
      await database.pool.query('UPDATE outlets SET monthly_visits = (id * 7919 + $2::int * 104729) % 60000 WHERE id = ANY($1::int[])', [written, round]);
      if (round % 3 === 1) await database.pool.query(`UPDATE outlets SET name = name || ' quokka' WHERE id = ANY($1::int[])`, [written.slice(0, 3)]);
      if (round % 3 === 2) await database.pool.query(`UPDATE outlets SET country = 'FR' WHERE id = ANY($1::int[])`, [written.slice(0, 3)]);
      await engine.catchUp();
      await loaded.catchUp();
      await check();
    }
    await loaded.close();
  });
});
