import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upsertOutlets } from '../../src/domain/outlets/outlet-upsert.js';
import { generateOutlets, runDomainTag } from '../../src/demo/outlet-generator.js';
import { filterOf } from '../../src/domain/outlets/search-filter.js';
import { createPublisher } from '../../src/domain/publishers/publisher-service.js';
import { connect, listen, ok } from '../mcp/helpers.js';
import { setupApp } from '../helpers/app.js';
import { offerInput, outletInput } from '../helpers/catalog.js';
import { runCli } from '../helpers/cli.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';
import { oracle } from '../helpers/search-oracle.js';

// Search as a buyer uses it, over 2,000 generated outlets: every word must match, a quoted phrase
// matches as one, a typo in a topic or description word still finds, the language filter, odd
// input, every filter and sort giving the page and total a brute-force SQL scan gives
// (test/helpers/search-oracle.ts), and an import by another process searchable within moments.

const h = await setupApp({ RATE_LIMIT_PER_MINUTE: 100_000 });
const ws = await workspaceWithKeys(h.database.pool);
const pub = await createPublisher(h.database.pool, 'Search fixture publisher');
const COUNT = 2_000;
await upsertOutlets(h.database.pool, pub.id, generateOutlets(COUNT, 11, { domainTag: runDomainTag(pub.id, 11) }), 0.2);
await h.database.pool.query('ANALYZE outlets');

// The search index loads in the background; the tests below use it.
const engine = h.app.searchEngine;
for (let i = 0; !engine.loaded; i++) {
  if (i > 400) throw new Error('the search index never loaded');
  await new Promise((r) => setTimeout(r, 25));
}
// It loaded before the outlets were written and read them one write at a time. A lost listening
// connection makes it load everything again, as at the start of a process over a full catalog
// (posting lists packed, slot orders sorted): that index is the one the tests below read.
const first = engine.loaded;
await h.database.pool.query(
  `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = 'LISTEN outlets_changed' AND datname = current_database()`,
);
for (let i = 0; engine.loaded === first; i++) {
  if (i > 400) throw new Error('the search index never loaded again');
  await new Promise((r) => setTimeout(r, 25));
}

/** A REST query as the search it asks for (the oracle's input). */
function searchOf(query: Record<string, string | number | boolean>) {
  const v = (k: string) => (query[k] === undefined ? undefined : String(query[k]));
  const filter = filterOf({
    type: v('type') as never,
    format: v('format') as never,
    country: v('country'),
    language: v('language'),
    topic: v('topic'),
    max_price_cents: query.max_price_usd === undefined ? undefined : Number(query.max_price_usd) * 100,
    verified_traffic: query.verified_traffic === undefined ? undefined : query.verified_traffic === true || query.verified_traffic === 'true',
    min_traffic: query.min_traffic === undefined ? undefined : Number(query.min_traffic),
  });
  return { q: v('q'), sort: v('sort') as never, filter };
}

/** The oracle's page of a REST query (page and per_page as the query says, else 1 and 15). */
async function expected(query: Record<string, string | number | boolean>) {
  const perPage = Number(query.per_page ?? 15);
  const page = Number(query.page ?? 1);
  return oracle(h.database.pool, searchOf(query), (page - 1) * perPage, perPage);
}

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

describe('GET /api/v1/outlets?q=: words — happy', () => {
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

describe('GET /api/v1/outlets?q=: typos — happy', () => {
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

describe('GET /api/v1/outlets?language= (REST and MCP search-outlets) — happy', () => {
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
});

describe('GET /api/v1/outlets?language=: not a language code — errors', () => {
  it('refuses what is not a language code', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/api/v1/outlets?language=deu', headers: bearer(ws.readKey) });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors.language).toBeDefined();
  });
});

describe('GET /api/v1/outlets?q=: odd input — errors', () => {
  it('1,000 characters: 422 naming q', async () => {
    const res = await h.app.inject({ method: 'GET', url: `/api/v1/outlets?q=${'travel '.repeat(143).slice(0, 1000)}`, headers: bearer(ws.readKey) });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors.q).toBeDefined();
  });
});

describe('GET /api/v1/outlets?q=: only punctuation or stop words — happy', () => {
  it('only punctuation or only stop words: an empty page', async () => {
    for (const q of ['?!.,;:-()[]', 'the and of to with', '"" ""', '-']) {
      const page = await list({ q });
      expect(page.data, q).toEqual([]);
      expect(page.meta.total, q).toBe(0);
    }
  });
});

describe('GET /api/v1/outlets, every filter and sort: the page a brute-force scan gives — happy', () => {
  // Some outlets have orders with check results (as the link checker writes them), some two, so
  // the sorts by link survival and verification have figures, ties and outlets without any.
  beforeAll(async () => {
    const buyer = await workspaceWithKeys(h.database.pool, { balanceCents: 1_000_000_000 });
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
    // The index reads them from their notifications: wait until it sorts as the brute force does.
    for (let i = 0; ; i++) {
      const query = { sort: 'link_survival', per_page: 100 };
      const [memory, scan] = [(await list(query)).data.map((x) => x.id), (await expected(query)).ids];
      if (JSON.stringify(memory) === JSON.stringify(scan)) break;
      if (i > 200) expect(memory).toEqual(scan);
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
    const pages = [await list({ per_page: 20, ...query })];
    const scan = await expected({ per_page: 20, ...query });
    expect(pages[0]!.data.map((i) => i.id)).toEqual(scan.ids);
    expect(pages[0]!.meta.total).toBe(scan.total);
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

describe('GET /api/v1/outlets meta.total and GET /readyz — happy', () => {
  it('/readyz says 200 once the search index is loaded, and its totals are those of a brute-force count', async () => {
    for (let i = 0; ; i++) {
      const res = await h.app.inject({ method: 'GET', url: '/readyz' });
      if (res.statusCode === 200) break;
      expect(res.statusCode).toBe(503);
      if (i > 200) throw new Error('never ready');
      await new Promise((r) => setTimeout(r, 50));
    }
    const queries: Record<string, string | number | boolean>[] = [
      {},
      { country: 'DE' },
      { q: 'travel' },
      { q: 'travl', country: 'DE' },
      { q: 'travel germany', language: 'de' },
      { q: 'blog', type: 'blog', verified_traffic: true },
      { q: 'journal', topic: 'finance', max_price_usd: 200, format: 'guest_post' },
      { q: 'news', min_traffic: 10_000 },
      { q: 'tech' },
      { q: 'the' },
      { q: '"united kingdom" travel' },
    ];
    for (const query of queries) expect((await list(query)).meta.total, JSON.stringify(query)).toBe((await expected(query)).total);
  });
});

describe('GET /api/v1/outlets: freshness of the search index — happy', () => {
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
