import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { upsertOutlets } from '../../src/domain/outlets/outlet-upsert.js';
import { generateOutlets, runDomainTag } from '../../src/demo/outlet-generator.js';
import { forgetCounts } from '../../src/domain/outlets/search-count.js';
import { type OutletFilters, searchStatements, searchTuning } from '../../src/domain/outlets/search.js';
import { counterFor } from '../../src/domain/outlets/search-live.js';
import { createPublisher } from '../../src/domain/publishers/publisher-service.js';
import { connect, listen, ok } from '../mcp/helpers.js';
import { setupApp } from '../helpers/app.js';
import { offerInput, outletInput } from '../helpers/catalog.js';
import { runCli } from '../helpers/cli.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';

// Search as a buyer uses it, over 2,000 generated outlets: every word must match, a quoted phrase
// matches as one, a typo in a topic or description word still finds, the language filter, odd
// input, every filter and sort read every way (from the in-memory index walking a slot order or
// sorting the matches; in PostgreSQL walking an index or from the word index) with the same
// result, and an import by another process searchable within moments.

const h = await setupApp({ RATE_LIMIT_PER_MINUTE: 100_000 });
const ws = await workspaceWithKeys(h.database.db);
const pub = await createPublisher(h.database.db, 'Search fixture publisher');
const COUNT = 2_000;
await upsertOutlets(h.database.pool, pub.id, generateOutlets(COUNT, 11, { domainTag: runDomainTag(pub.id, 11) }), 0.2);
await h.database.pool.query('ANALYZE outlets');

// The search index loads in the background; the tests below use it.
for (let i = 0; !counterFor(h.database.pool); i++) {
  if (i > 400) throw new Error('the search index never loaded');
  await new Promise((r) => setTimeout(r, 25));
}
// It loaded before the outlets were written and read them one write at a time. A lost listening
// connection makes it load everything again, as at the start of a process over a full catalog
// (posting lists packed, slot orders sorted): that index is the one the tests below read.
const first = counterFor(h.database.pool);
await h.database.pool.query(
  `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = 'LISTEN outlets_changed' AND datname = current_database()`,
);
for (let i = 0; !counterFor(h.database.pool) || counterFor(h.database.pool) === first; i++) {
  if (i > 400) throw new Error('the search index never loaded again');
  await new Promise((r) => setTimeout(r, 25));
}

const tuning = { ...searchTuning };
afterEach(() => Object.assign(searchTuning, tuning));

interface Item {
  id: number;
  name: string;
  description: string;
  topics: string[];
  country: string;
  language: string;
  from_price: number;
  traffic: { monthly_visits: number; verified: boolean };
  track_record: Record<string, number | null>;
}
interface Page {
  data: Item[];
  meta: { total: number };
}

async function list(query: Record<string, string | number | boolean>): Promise<Page> {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
  const res = await h.app.inject({ method: 'GET', url: `/api/v1/outlets?${qs}`, headers: bearer(ws.readKey) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Page;
}

const words = (item: Item) => `${item.name} ${item.topics.join(' ')} ${item.description}`.toLowerCase();

describe('words', () => {
  it('every word must match, anywhere', async () => {
    const both = await list({ q: 'travel germany', per_page: 100 });
    expect(both.meta.total).toBeGreaterThan(0);
    for (const item of both.data) {
      expect(words(item)).toContain('travel');
      expect(words(item)).toContain('germany');
    }
    const travel = await list({ q: 'travel' });
    const germany = await list({ q: 'germany' });
    expect(both.meta.total).toBeLessThan(Math.min(travel.meta.total, germany.meta.total));
  });

  it('a quoted phrase matches its words next to each other, in order', async () => {
    const phrase = await list({ q: '"united kingdom"', per_page: 100 });
    expect(phrase.meta.total).toBeGreaterThan(0);
    for (const item of phrase.data) expect(item.description).toContain('the United Kingdom');
    expect((await list({ q: '"kingdom united"' })).meta.total).toBe(0);
    // Unquoted, the same words match wherever they are.
    expect((await list({ q: 'kingdom united' })).meta.total).toBe(phrase.meta.total);
  });

  it('names first: an exact name, then names holding every word, then the rest; traffic within each', async () => {
    const { data } = await list({ q: 'travel', per_page: 100 });
    const inName = data.map((i) => /travel/i.test(i.name));
    // Once the names run out, no name match follows.
    expect(inName.indexOf(false) === -1 || !inName.slice(inName.indexOf(false)).includes(true)).toBe(true);
    const named = data.filter((i) => /travel/i.test(i.name)).map((i) => i.traffic.monthly_visits);
    expect(named).toEqual([...named].sort((a, b) => b - a));
    const first = data[0]!;
    expect((await list({ q: first.name })).data[0]!.name).toBe(first.name);
  });
});

describe('typos', () => {
  it('a topic word with one letter missing finds at least half of what the word finds, with a country too', async () => {
    for (const country of [undefined, 'DE']) {
      const c: Record<string, string> = country ? { country } : {};
      const right = await list({ q: 'travel', ...c });
      const typo = await list({ q: 'travl', ...c });
      expect(right.meta.total).toBeGreaterThan(0);
      expect(typo.meta.total).toBeGreaterThanOrEqual(right.meta.total / 2);
    }
  });

  it('typos in description and topic words, and two letters swapped in a name', async () => {
    const gaming = await list({ q: 'gamng', per_page: 100 });
    expect(gaming.meta.total).toBeGreaterThan(0);
    expect(gaming.data.filter((i) => i.topics.includes('gaming')).length).toBeGreaterThan(gaming.data.length / 2);
    expect((await list({ q: 'tecnology' })).meta.total).toBeGreaterThanOrEqual((await list({ q: 'technology' })).meta.total / 2);
    const named = (await list({ q: 'travel' })).data[0]!.name;
    const swapped = named.replace(/ravel/i, 'arvel'); // Travel → Tarvel
    expect((await list({ q: swapped })).data.map((i) => i.name)).toContain(named);
  });

  it('several words, each with a typo, must all match', async () => {
    const exact = await list({ q: 'travel germany' });
    const typos = await list({ q: 'travl germny' });
    expect(typos.meta.total).toBeGreaterThanOrEqual(exact.meta.total / 2);
    for (const item of typos.data) expect(words(item)).toContain('germany');
  });
});

describe('language', () => {
  it('filters REST and MCP alike, with and without text', async () => {
    const de = await list({ language: 'de', per_page: 100 });
    expect(de.meta.total).toBeGreaterThan(0);
    expect(new Set(de.data.map((i) => i.language))).toEqual(new Set(['de']));
    const upper = await list({ language: 'DE', per_page: 100 });
    expect(upper.meta.total).toBe(de.meta.total);
    const text = await list({ q: 'travel', language: 'fr', per_page: 100 });
    expect(text.meta.total).toBeGreaterThan(0);
    for (const item of text.data) expect(item.language).toBe('fr');

    const client = await connect(await listen(h), ws.readKey);
    const viaMcp = await ok<{ items: Item[]; meta: { total: number } }>(client, 'search-outlets', { q: 'travel', language: 'fr', per_page: 100 });
    expect(viaMcp.items).toEqual(text.data);
    expect(viaMcp.meta.total).toBe(text.meta.total);
  });

  it('refuses what is not a language code', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/api/v1/outlets?language=deu', headers: bearer(ws.readKey) });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors.language).toBeDefined();
  });
});

describe('odd input', () => {
  it('1,000 characters: 422 naming q', async () => {
    const res = await h.app.inject({ method: 'GET', url: `/api/v1/outlets?q=${'travel '.repeat(143).slice(0, 1000)}`, headers: bearer(ws.readKey) });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors.q).toBeDefined();
  });

  it('only punctuation or only stop words: an empty page', async () => {
    for (const q of ['?!.,;:-()[]', 'the and of to with', '"" ""', '-']) {
      const page = await list({ q });
      expect(page.data, q).toEqual([]);
      expect(page.meta.total, q).toBe(0);
    }
  });
});

describe('both ways of reading a page give the same page', () => {
  // Some outlets have orders with check results (as the link checker writes them), some two, so
  // the sorts by link survival and verification have figures, ties and outlets without any.
  beforeAll(async () => {
    const buyer = await workspaceWithKeys(h.database.db, { balanceCents: 1_000_000_000 });
    const { rows } = await h.database.pool.query<{ id: number }>(
      `SELECT DISTINCT ON (f.outlet_id) f.id FROM offers f WHERE f.active AND f.outlet_id % 7 = 0 ORDER BY f.outlet_id, f.price LIMIT 250`,
    );
    const offers = rows.map((r) => r.id);
    for (const chunk of [offers.slice(0, 50), ...Array.from({ length: 5 }, (_, i) => offers.slice(i * 50, i * 50 + 50))]) {
      const res = await h.app.inject({
        method: 'POST',
        url: '/api/v1/orders',
        headers: { ...bearer(buyer.spendKey), 'idempotency-key': crypto.randomUUID() },
        payload: { offer_ids: chunk, target_url: 'https://buyer.example/' },
      });
      expect(res.statusCode, res.body).toBe(201);
    }
    await h.database.pool.query(
      `UPDATE orders SET first_check_passed = CASE WHEN id % 5 = 0 THEN NULL ELSE id % 3 <> 0 END,
                         alive_30d = CASE WHEN id % 4 = 0 THEN NULL ELSE id % 5 <> 1 END,
                         alive_60d = CASE WHEN id % 4 = 0 OR id % 3 = 0 THEN NULL ELSE id % 7 <> 2 END
        WHERE workspace_id = $1`,
      [buyer.workspaceId],
    );
    // The index reads them from their notifications: wait until it sorts as PostgreSQL does.
    const page = async (inMemory: boolean) => {
      Object.assign(searchTuning, { inMemory });
      return (await list({ sort: 'link_survival', per_page: 100 })).data.map((i) => i.id);
    };
    for (let i = 0; ; i++) {
      const [memory, postgres] = [await page(true), await page(false)];
      Object.assign(searchTuning, tuning);
      if (JSON.stringify(memory) === JSON.stringify(postgres)) break;
      if (i > 200) expect(memory).toEqual(postgres);
      await new Promise((r) => setTimeout(r, 25));
    }
    const top = (await list({ sort: 'link_survival', per_page: 1 })).data[0]!.track_record;
    expect(top.links_checked_30d).toBeGreaterThan(0);
    const total = (await list({ sort: 'verification', per_page: 1 })).meta.total;
    const last = (await list({ sort: 'verification', per_page: 1, page: total })).data[0]!.track_record;
    expect(last.placements_checked).toBe(0);
  });

  const cases: Record<string, string | number | boolean>[] = [];
  // Without text too: browsing reads the same index.
  for (const text of ['blog', 'travel', 'journal', 'travl', 'travel news', '"united states"', undefined]) {
    const q: Record<string, string> = text === undefined ? {} : { q: text };
    for (const sort of ['relevance', 'traffic', '-traffic', 'price', '-price', 'link_survival', 'verification']) cases.push({ ...q, sort });
    cases.push({ ...q, sort: 'link_survival', country: 'US', page: 2, per_page: 5 }, { ...q, sort: 'verification', format: 'guest_post', max_price_usd: 300 });
    cases.push({ ...q, country: 'US' }, { ...q, topic: 'finance' }, { ...q, type: 'news' }, { ...q, format: 'guest_post', max_price_usd: 300 });
    cases.push({ ...q, verified_traffic: true, min_traffic: 5_000 }, { ...q, language: 'en', page: 2, per_page: 5 });
    cases.push({ ...q, format: 'press_release', sort: '-price', page: 3, per_page: 7 });
  }

  it.each(cases)('%o', async (query) => {
    const pages: Page[] = [];
    // From the in-memory index: each tier's page by walking the slot order, by sorting its
    // matches, or the cheaper. From PostgreSQL (as while the index loads): walking a long way (the
    // page is found by walking), walking 3 rows (it never is: the word index answers), never
    // walking.
    for (const t of [
      { inMemory: true, pick: 'auto' as const },
      { inMemory: true, pick: 'walk' as const },
      { inMemory: true, pick: 'sort' as const },
      { inMemory: false, walkRows: 100_000, fewMatches: 0 },
      { inMemory: false, walkRows: 3, fewMatches: 0 },
      { inMemory: false, walkRows: 100_000, fewMatches: 1e9 },
    ]) {
      Object.assign(searchTuning, t);
      forgetCounts();
      pages.push(await list({ per_page: 20, ...query }));
    }
    for (const other of pages.slice(1)) expect(other).toEqual(pages[0]);
    // The rated sorts follow the figures the page shows: best first, none last, then traffic.
    const keyOf = {
      link_survival: (t: Item['track_record']) => [t.link_survival_30d, t.link_survival_60d, t.links_checked_30d, t.links_checked_60d],
      verification: (t: Item['track_record']) => [t.verification_pass_rate, t.placements_checked],
    }[String(query.sort)];
    if (keyOf) {
      const keys = pages[0]!.data.map((i) => [...keyOf(i.track_record).map((v) => v ?? -1), i.traffic.monthly_visits] as number[]);
      for (let i = 1; i < keys.length; i++) {
        const d = keys[i - 1]!.map((v, j) => v - keys[i]![j]!).find((x) => x !== 0) ?? 0;
        expect(d, JSON.stringify([keys[i - 1], keys[i]])).toBeGreaterThanOrEqual(0);
      }
    }
    const price = query.format === 'guest_post' ? 30_000 : Infinity;
    for (const item of pages[0]!.data) expect(item.from_price).toBeLessThanOrEqual(price);
  });
});

describe('meta.total', () => {
  it('/readyz says 200 once the search index is loaded, and its counts are those of PostgreSQL', async () => {
    for (let i = 0; ; i++) {
      const res = await h.app.inject({ method: 'GET', url: '/readyz' });
      if (res.statusCode === 200) break;
      expect(res.statusCode).toBe(503);
      if (i > 200) throw new Error('never ready');
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(counterFor(h.database.pool)).toBeDefined();
    const queries: OutletFilters[] = [
      {},
      { country: 'DE' },
      { q: 'travel' },
      { q: 'travl', country: 'DE' },
      { q: 'travel germany', language: 'de' },
      { q: 'blog', type: 'blog', verifiedTraffic: true },
      { q: 'journal', topic: 'finance', maxPriceCents: 20_000, format: 'guest_post' },
      { q: 'news', minTraffic: 10_000 },
      { q: 'tech' },
      { q: 'the' },
    ];
    for (const f of queries) {
      const plan = await searchStatements(h.database.pool, f, 1, 15);
      const expected = plan ? (await h.database.pool.query<{ n: number }>(plan.count)).rows[0]!.n : 0;
      const params: Record<string, string | number | boolean> = { ...(f.q ? { q: f.q } : {}), ...(f.country ? { country: f.country } : {}) };
      if (f.language) params.language = f.language;
      if (f.type) params.type = f.type;
      if (f.verifiedTraffic !== undefined) params.verified_traffic = f.verifiedTraffic;
      if (f.topic) params.topic = f.topic;
      if (f.maxPriceCents !== undefined) params.max_price_usd = f.maxPriceCents / 100;
      if (f.format) params.format = f.format;
      if (f.minTraffic !== undefined) params.min_traffic = f.minTraffic;
      expect((await list(params)).meta.total, JSON.stringify(f)).toBe(expected);
    }
  });
});

describe('freshness', () => {
  const dir = mkdtempSync(join(tmpdir(), 'search-fresh-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('an outlet imported by another process is found within moments, by its name, a typo of a new word, and its domain', async () => {
    const file = join(dir, 'outlets.jsonl');
    const outlet = outletInput('zephyrquill-journal.example', {
      name: 'Zephyrquill Journal',
      description: 'Kitesurfing notes from Tarifa.',
      topics: ['sports'],
      offers: [offerInput({ publisher_price_cents: 12_000 })],
    });
    writeFileSync(file, JSON.stringify(outlet) + '\n');
    const before = await list({ q: 'Zephyrquill' });
    expect(before.meta.total).toBe(0);
    const r = await runCli(['outlets', 'import', '--publisher', String(pub.id), '--file', file], { DATABASE_URL: h.database.url });
    expect(r.status, r.stderr).toBe(0);
    // This process's index reads the new row on the notification, within moments.
    for (let i = 0; (await list({ q: 'Zephyrquill' })).meta.total !== 1; i++) {
      if (i > 100) throw new Error('the search never included the import');
      await new Promise((r) => setTimeout(r, 20));
    }
    expect((await list({ q: 'Zephyrquill Journal' })).data[0]?.name).toBe('Zephyrquill Journal');
    expect((await list({ q: 'zephyrqill' })).data.map((i) => i.name)).toContain('Zephyrquill Journal');
    expect((await list({ q: 'kitesurfng tarifa' })).data.map((i) => i.name)).toEqual(['Zephyrquill Journal']);
    expect((await list({ q: 'https://zephyrquill-journal.example/' })).data[0]?.name).toBe('Zephyrquill Journal');
  });
});
