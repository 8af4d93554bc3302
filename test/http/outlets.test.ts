import { describe, expect, it } from 'vitest';
import { upsertOutlets } from '../../src/domain/outlets/outlet-upsert.js';
import type { OutletInput } from '../../src/domain/outlets/outlet-input.js';
import { createPublisher } from '../../src/domain/publishers/publisher-service.js';
import { outletDetail, outletListItem } from '../../src/schemas/outlets.js';
import { setupApp } from '../helpers/app.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';
import { NO_LINK_FIGURES } from '../helpers/catalog.js';

const h = await setupApp();
const ws = await workspaceWithKeys(h.database.pool);
const eur = await workspaceWithKeys(h.database.pool, { currency: 'EUR' });
const pub = await createPublisher(h.database.pool, 'Search publisher');

type Offer = OutletInput['offers'][number];
const offer = (format: Offer['format'], dollars: number, over: Partial<Offer> = {}): Offer => ({
  format,
  title: `${format} ${dollars}`,
  publisher_price_cents: Math.round(dollars * 100 / 1.2), // price = publisher price + 20% fee
  turnaround_days: 5,
  content_by: 'buyer',
  min_words: 300,
  max_words: 2000,
  max_links: 2,
  link_type: 'dofollow',
  sponsored_label: true,
  permanent: true,
  ...over,
});
const outlet = (name: string, domain: string, over: Partial<OutletInput>): OutletInput => ({
  name,
  domain,
  description: `${name} publishes articles.`,
  type: 'blog',
  country: 'US',
  language: 'en',
  topics: ['technology'],
  traffic: { monthly_visits: 10_000, verified: false },
  offers: [offer('guest_post', 100)],
  ...over,
});

await upsertOutlets(h.database.pool, pub.id, [
  outlet('TechCrunch Daily', 'techcrunch-daily.example', { type: 'news', topics: ['technology', 'business'], traffic: { monthly_visits: 900_000, verified: true }, offers: [offer('guest_post', 600), offer('link_insertion', 150)] }),
  outlet('Tech Corner', 'techcorner.example', { traffic: { monthly_visits: 50_000, verified: true }, offers: [offer('guest_post', 90)] }),
  outlet('Wanderlust Travel Notes', 'wanderlust.example', { type: 'magazine', country: 'GB', topics: ['travel', 'lifestyle'], description: 'Travel guides and hotel reviews from around Europe.', traffic: { monthly_visits: 300_000, verified: true }, offers: [offer('sponsored_article', 400), offer('guest_post', 250)] }),
  outlet('Berliner Finanzen', 'finanzen-berlin.example', { type: 'news', country: 'DE', language: 'de', topics: ['finance'], description: 'Markets, banking and personal finance.', traffic: { monthly_visits: 120_000, verified: false }, offers: [offer('press_release', 80)] }),
  outlet('Crypto Pulse', 'cryptopulse.example', { type: 'niche_site', topics: ['crypto', 'finance'], description: 'Bitcoin and blockchain news.', traffic: { monthly_visits: 5_000, verified: false }, offers: [offer('link_insertion', 40), offer('guest_post', 2_500)] }),
  outlet('Press Wire Global', 'presswire.example', { type: 'press', country: 'GB', topics: ['business'], traffic: { monthly_visits: 2_000_000, verified: true }, offers: [offer('press_release', 1_200)] }),
  outlet('Dormant Blog', 'dormant.example', { offers: [offer('guest_post', 10, { active: false })] }),
], 0.2);
// A search never waits for the index to read a write; the tests below search what was just written.
await h.app.searchEngine.catchUp();

const list = async (query: string, key = ws.readKey) => {
  const res = await h.app.inject({ method: 'GET', url: `/api/v1/outlets${query ? `?${query}` : ''}`, headers: bearer(key) });
  return { res, body: res.json() };
};
const names = (body: { data: { name: string }[] }) => body.data.map((o) => o.name);

describe('GET /api/v1/outlets — happy', () => {
  it('lists outlets with an active offer, most traffic first, in the contract shape', async () => {
    const { res, body } = await list('');
    expect(res.statusCode).toBe(200);
    for (const item of body.data) outletListItem.parse(item);
    expect(names(body)).toEqual(['Press Wire Global', 'TechCrunch Daily', 'Wanderlust Travel Notes', 'Berliner Finanzen', 'Tech Corner', 'Crypto Pulse']);
    expect(body.meta.total).toBe(6);
    const tc = body.data[1];
    expect(tc).toMatchObject({ from_price: 15_000, from_price_formatted: '$150.00', traffic: { monthly_visits: 900_000, verified: true } });
    expect(tc.traffic.verified_at).toMatch(/Z$/);
    expect(tc.track_record).toEqual({
      orders_completed: 0,
      on_time_rate: null,
      acceptance_rate: null,
      avg_turnaround_days: null,
      rating: null,
      ...NO_LINK_FIGURES,
    });
  });

  it('formats from_price in the workspace currency', async () => {
    const { body } = await list('q=Tech%20Corner', eur.readKey);
    expect(body.data[0]).toMatchObject({ name: 'Tech Corner', from_price: 9_000, from_price_formatted: '€82.80' });
  });

  describe('filters alone', () => {
    it('type', async () => expect(names((await list('type=news')).body)).toEqual(['TechCrunch Daily', 'Berliner Finanzen']));
    it('country (case-insensitive)', async () => expect(names((await list('country=gb')).body)).toEqual(['Press Wire Global', 'Wanderlust Travel Notes']));
    it('topic', async () => expect(names((await list('topic=finance')).body)).toEqual(['Berliner Finanzen', 'Crypto Pulse']));
    it('verified_traffic=true and =0', async () => {
      expect(names((await list('verified_traffic=true')).body)).toEqual(['Press Wire Global', 'TechCrunch Daily', 'Wanderlust Travel Notes', 'Tech Corner']);
      expect(names((await list('verified_traffic=0')).body)).toEqual(['Berliner Finanzen', 'Crypto Pulse']);
    });
    it('min_traffic', async () => expect(names((await list('min_traffic=300000')).body)).toEqual(['Press Wire Global', 'TechCrunch Daily', 'Wanderlust Travel Notes']));
    it('format, with from_price of that format', async () => {
      const { body } = await list('format=guest_post');
      expect(names(body)).toEqual(['TechCrunch Daily', 'Wanderlust Travel Notes', 'Tech Corner', 'Crypto Pulse']);
      expect(body.data.map((o: { from_price: number }) => o.from_price)).toEqual([60_000, 25_000, 9_000, 250_000]);
    });
    it('max_price_usd (any format)', async () => expect(names((await list('max_price_usd=100')).body)).toEqual(['Berliner Finanzen', 'Tech Corner', 'Crypto Pulse']));
    it('q', async () => expect(names((await list('q=travel')).body)).toEqual(['Wanderlust Travel Notes']));
  });

  describe('filters combined', () => {
    it('format + max_price_usd: one offer of that format must cost at most the price', async () => {
      expect(names((await list('format=guest_post&max_price_usd=300')).body)).toEqual(['Wanderlust Travel Notes', 'Tech Corner']);
      expect(names((await list('format=link_insertion&max_price_usd=100')).body)).toEqual(['Crypto Pulse']);
    });
    it('country + type + verified', async () => expect(names((await list('country=GB&type=press&verified_traffic=1')).body)).toEqual(['Press Wire Global']));
    it('q + topic + min_traffic', async () => expect(names((await list('q=tech&topic=technology&min_traffic=60000')).body)).toEqual(['TechCrunch Daily']));
    it('q + country that excludes everything', async () => {
      const { res, body } = await list('q=tech&country=DE');
      expect(res.statusCode).toBe(200);
      expect(body.data).toEqual([]);
      expect(body.meta).toMatchObject({ total: 0, from: null, to: null, last_page: 1 });
    });
    it('topic + format + sort=price', async () => expect(names((await list('topic=technology&format=guest_post&sort=price')).body)).toEqual(['Tech Corner', 'TechCrunch Daily']));
  });

  describe('sorting', () => {
    it('price and -price use the cheapest matching offer', async () => {
      expect(names((await list('sort=price')).body)).toEqual(['Crypto Pulse', 'Berliner Finanzen', 'Tech Corner', 'TechCrunch Daily', 'Wanderlust Travel Notes', 'Press Wire Global']);
      expect(names((await list('sort=-price')).body)[0]).toBe('Press Wire Global');
    });
    it('traffic ascending', async () => expect(names((await list('sort=traffic')).body)[0]).toBe('Crypto Pulse'));
    it('relevance without q falls back to traffic', async () => expect(names((await list('sort=relevance')).body)[0]).toBe('Press Wire Global'));
  });

  describe('ranking', () => {
    it('an exact name ranks first', async () => {
      expect(names((await list('q=Tech%20Corner')).body)[0]).toBe('Tech Corner');
      expect(names((await list('q=TechCrunch%20Daily')).body)[0]).toBe('TechCrunch Daily');
    });
    it('a name with one letter missing is still found', async () => {
      expect(names((await list('q=Wanderlst')).body)).toContain('Wanderlust Travel Notes');
      expect(names((await list('q=Techcrnch')).body)[0]).toBe('TechCrunch Daily');
    });
    it('a partial name or a domain finds the outlet', async () => {
      expect(names((await list('q=Wanderl')).body)).toContain('Wanderlust Travel Notes');
      expect(names((await list('q=cryptopulse.example')).body)[0]).toBe('Crypto Pulse');
    });
    it('words of the description match (stemmed)', async () => expect(names((await list('q=hotels')).body)).toEqual(['Wanderlust Travel Notes']));
    it('hostile text is just text', async () => {
      for (const q of ["'; DROP TABLE outlets; --", '!!! & | <->', '"unclosed', 'Ünïcödé ☃', '%_\\']) {
        const { res } = await list(`q=${encodeURIComponent(q)}`);
        expect(res.statusCode, q).toBe(200);
      }
    });
  });

  describe('pagination', () => {
    it('pages keep the filters in their links', async () => {
      const { body } = await list('per_page=2&page=2&verified_traffic=true');
      expect(names(body)).toEqual(['Wanderlust Travel Notes', 'Tech Corner']);
      expect(body.meta).toMatchObject({ current_page: 2, per_page: 2, from: 3, to: 4, total: 4, last_page: 2 });
      expect(body.links.prev).toContain('verified_traffic=true');
      expect(body.links.prev).toContain('page=1');
      expect(body.links.next).toBeNull();
      expect(body.links.first).toMatch(/^http:\/\/[^/]+\/api\/v1\/outlets\?/);
      expect(body.meta.links.filter((l: { active: boolean }) => l.active)).toEqual([{ url: expect.stringContaining('page=2'), label: '2', active: true }]);
    });
    it('a page past the end is 200 with empty data and correct meta', async () => {
      const { res, body } = await list('per_page=5&page=9');
      expect(res.statusCode).toBe(200);
      expect(body.data).toEqual([]);
      expect(body.meta).toMatchObject({ current_page: 9, total: 6, last_page: 2, from: null, to: null });
    });
    it('per_page=1 and per_page=100 are accepted', async () => {
      expect((await list('per_page=1')).body.data).toHaveLength(1);
      expect((await list('per_page=100')).body.data).toHaveLength(6);
    });
  });
});

describe('GET /api/v1/outlets — errors', () => {
  describe('bad input → 422 naming the field', () => {
    const cases: [string, string][] = [
      ['type=podcast', 'type'],
      ['format=banner', 'format'],
      ['sort=name', 'sort'],
      ['country=XX', 'country'],
      ['country=USA', 'country'],
      ['max_price_usd=0', 'max_price_usd'],
      ['max_price_usd=-5', 'max_price_usd'],
      ['max_price_usd=abc', 'max_price_usd'],
      ['max_price_usd=1e309', 'max_price_usd'],
      ['max_price_usd=0.004', 'max_price_usd'], // rounds to the 0 cents refused above
      ['per_page=0', 'per_page'],
      ['per_page=101', 'per_page'],
      ['page=0', 'page'],
      [`q=${'x'.repeat(201)}`, 'q'],
      ['verified_traffic=yes', 'verified_traffic'],
      ['min_traffic=-1', 'min_traffic'],
      ['topic=Not%20A%20Slug', 'topic'],
      ['type=blog&type=news', 'type'],
    ];
    for (const [query, field] of cases) {
      it(query.slice(0, 40), async () => {
        const { res, body } = await list(query);
        expect(res.statusCode).toBe(422);
        expect(body.code).toBe('invalid_input');
        expect(Object.keys(body.errors)).toContain(field);
      });
    }
  });

  it('a parameter whose percent-escapes are not UTF-8 → 422 naming it, not a search for its text', async () => {
    for (const [query, field] of [['q=%ED%A0%80', 'q'], ['q=100%', 'q'], ['country=%FF', 'country'], ['per_page=5&q=a%zzb', 'q']] as const) {
      const { res, body } = await list(query);
      expect(res.statusCode, query).toBe(422);
      expect(body.errors, query).toEqual({ [field]: ['is not valid percent-encoded UTF-8'] });
    }
    // Well-formed escapes, a literal % among them, still read as written.
    const fine = await list('q=%25off%20travel&per_page=5');
    expect(fine.res.statusCode).toBe(200);
  });
});

describe('GET /api/v1/outlets — security', () => {
  it('401 without a key', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/api/v1/outlets', remoteAddress: '10.2.2.2' });
    expect(res.statusCode).toBe(401);
  });
});

describe('GET /api/v1/outlets/{id} — happy', () => {
  it('shows every active offer with fee-inclusive prices', async () => {
    const { body: listed } = await list('q=TechCrunch%20Daily');
    const id = listed.data[0].id;
    const res = await h.app.inject({ method: 'GET', url: `/api/v1/outlets/${id}`, headers: bearer(eur.readKey) });
    expect(res.statusCode).toBe(200);
    const data = outletDetail.parse(res.json().data);
    expect(data.offers.map((o) => [o.format, o.price, o.price_formatted])).toEqual([
      ['link_insertion', 15_000, '€138.00'],
      ['guest_post', 60_000, '€552.00'],
    ]);
    expect(res.json().data.offers[0]).not.toHaveProperty('publisher_price_cents');
    expect(res.json().data.offers[0]).not.toHaveProperty('fee_cents');
  });

  it('hides inactive offers', async () => {
    const { rows } = await h.database.pool.query(`SELECT id FROM outlets WHERE domain = 'dormant.example'`);
    const res = await h.app.inject({ method: 'GET', url: `/api/v1/outlets/${rows[0].id}`, headers: bearer(ws.readKey) });
    expect(res.json().data.offers).toEqual([]);
  });
});

describe('GET /api/v1/outlets/{id} — errors', () => {
  it('404 for an unknown id, 422 for a malformed one', async () => {
    const missing = await h.app.inject({ method: 'GET', url: '/api/v1/outlets/999999', headers: bearer(ws.readKey) });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().code).toBe('not_found');
    for (const bad of ['abc', '0', '-1', '1.5', '99999999999']) {
      const res = await h.app.inject({ method: 'GET', url: `/api/v1/outlets/${bad}`, headers: bearer(ws.readKey) });
      expect(res.statusCode, bad).toBe(422);
      expect(Object.keys(res.json().errors)).toEqual(['id']);
    }
    // A positive id beyond what the database holds says its bound, not that it is not positive.
    const big = await h.app.inject({ method: 'GET', url: '/api/v1/outlets/2147483648', headers: bearer(ws.readKey) });
    expect(big.json().errors).toEqual({ id: ['must be at most 2,147,483,647'] });
  });
});
