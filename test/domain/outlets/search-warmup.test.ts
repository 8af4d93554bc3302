import { afterAll, describe, expect, it, vi } from 'vitest';
import { generateOutlets, runDomainTag } from '../../../src/demo/outlet-generator.js';
import { upsertOutlets } from '../../../src/domain/outlets/outlet-upsert.js';
import { SearchEngine } from '../../../src/domain/outlets/search-engine.js';
import { SearchIndex } from '../../../src/domain/outlets/search-index.js';
import { loadIndex } from '../../../src/domain/outlets/search-loader.js';
import { OutletQuery } from '../../../src/domain/outlets/search-query.js';
import { WARM_SEARCHES, warmSearches, warmUp } from '../../../src/domain/outlets/search-warmup.js';
import { createPublisher } from '../../../src/domain/publishers/publisher-service.js';
import { createTestDatabase } from '../../helpers/db.js';

// Issue 56: a fresh index answered its first searches several times slower than later ones, so the
// first seconds of traffic after /readyz stalled. The engine now answers searches of its own over
// a loaded index before it is ready: nothing is answered, and /readyz (which reads `ready`) says
// not ready, until that is done; and those searches change nothing a client then finds.
const database = await createTestDatabase();
const pub = await createPublisher(database.pool, 'Warm-up publisher');
await upsertOutlets(database.pool, pub.id, generateOutlets(400, 9, { domainTag: runDomainTag(pub.id, 9) }), 0.2);
afterAll(() => database.drop());

const waitReady = async (engine: SearchEngine) => {
  for (let i = 0; !engine.ready; i++) {
    if (i > 400) throw new Error('the engine never became ready');
    await new Promise((r) => setTimeout(r, 25));
  }
};

describe('the search engine warms a loaded index before it is ready', () => {
  it('is not ready, and a search is unavailable, while the warm-up runs; ready once it is done', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let warming: SearchIndex | undefined;
    const engine = new SearchEngine(database.pool, undefined, async (index) => {
      warming = index;
      await held;
    });
    engine.start();
    try {
      for (let i = 0; !warming; i++) {
        if (i > 400) throw new Error('the index never loaded');
        await new Promise((r) => setTimeout(r, 25));
      }
      // Loaded, and still not ready.
      expect(warming.counts.live).toBeGreaterThanOrEqual(400);
      expect(engine.ready).toBe(false);
      await expect(engine.search({ q: 'news', filter: {}, sort: 'relevance', offset: 0, limit: 10 })).rejects.toMatchObject({ code: 'unavailable' });
      release();
      await waitReady(engine);
      expect(engine.loaded).toBe(warming);
      expect((await engine.search({ filter: {}, sort: '-traffic', offset: 0, limit: 10 })).ids).toHaveLength(10);
    } finally {
      release();
      await engine.close();
    }
  });

  it('by default answers its warm-up searches over the index before it is ready', async () => {
    const match = vi.spyOn(OutletQuery.prototype, 'total');
    const engine = new SearchEngine(database.pool);
    try {
      engine.start();
      await waitReady(engine);
      // As many as the catalog's size asks for (400 outlets: a few), and some.
      const count = warmSearches(engine.loaded!.counts.live);
      expect(count).toBeGreaterThan(0);
      expect(match.mock.calls.length).toBeGreaterThanOrEqual(count);
    } finally {
      match.mockRestore();
      await engine.close();
    }
  });

  it('answers all its searches for a big catalog, fewer for a smaller one, none for a test-sized one', () => {
    expect(warmSearches(1_000_000)).toBe(WARM_SEARCHES);
    expect(warmSearches(100_000)).toBe(WARM_SEARCHES);
    expect(warmSearches(50_000)).toBe(WARM_SEARCHES / 2);
    expect(warmSearches(400)).toBe(4);
    expect(warmSearches(99)).toBe(0);
    expect(warmSearches(0)).toBe(0);
  });

  it('answers none over a catalog too small to warm', async () => {
    const small = await createTestDatabase();
    try {
      const index = new SearchIndex();
      await loadIndex(small.pool, index);
      let asked = 0;
      const ask = async () => {
        asked++;
        return { total: 0, ids: [] };
      };
      await warmUp(index, ask);
      expect(asked).toBe(0);
      // Asked for a count, it answers them whatever the size.
      await warmUp(index, ask, 20);
      expect(asked).toBe(20);
    } finally {
      await small.drop();
    }
  });

  it('leaves the index as it found it: every sort and filter answers as on an index never warmed', async () => {
    const cold = new SearchIndex();
    await loadIndex(database.pool, cold);
    // All of WARM_SEARCHES, asked as clients ask (the catalog's size would ask for a few).
    const engine = new SearchEngine(database.pool, undefined, (index, ask) => warmUp(index, ask, WARM_SEARCHES));
    engine.start();
    await waitReady(engine);
    await engine.close();
    const warm = engine.loaded!;
    expect(warm.version).toBe(cold.version);
    expect(warm.counts).toEqual(cold.counts);
    const words = cold.sampleWords(6);
    expect(words.length).toBeGreaterThan(0);
    const { countries, topics } = cold.filterValues();
    for (const sort of ['relevance', 'traffic', '-traffic', 'price', '-price', 'link_survival', 'verification'] as const) {
      for (const filter of [{}, { countries: countries.slice(0, 1) }, { topic: topics[0] }, { maxPriceCents: 30_000 }]) {
        for (const w of [undefined, ...words]) {
          const q = w === undefined ? undefined : { exactName: w, domain: undefined, groups: [{ lexemes: [w] }] };
          const answer = (ix: SearchIndex) => {
            const query = new OutletQuery(ix, q, filter);
            const out = { total: query.total(), ids: query.page(sort, q !== undefined, 25) };
            query.release();
            return out;
          };
          expect(answer(warm)).toEqual(answer(cold));
        }
      }
    }
  });
});
