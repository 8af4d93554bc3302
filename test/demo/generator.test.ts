import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_OUTLETS, seedDemoIfEmpty } from '../../src/demo/seed.js';
import { upsertOutlets, type OutletWithBaseline } from '../../src/domain/outlets/outlet-upsert.js';
import { generateOutlets, outletStream, runDomainTag } from '../../src/demo/outlet-generator.js';
import { outletInput } from '../../src/domain/outlets/outlet-input.js';
import { createPublisher } from '../../src/domain/publishers/publisher-service.js';
import { createTestDatabase } from '../helpers/db.js';

const database = await createTestDatabase({ max: 3 });
afterAll(() => database.drop());

const N = 3_000;
const sample = generateOutlets(N, 7);

const quantile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
const median = (xs: number[]) => quantile([...xs].sort((a, b) => a - b), 0.5);
const decimals = (x: number) => (String(x).split('.')[1] ?? '').length;
const withoutBaseline = ({ baseline: _baseline, ...input }: OutletWithBaseline) => input;

describe('generateOutlets', () => {
  it('is deterministic for a seed and differs between seeds', () => {
    expect(generateOutlets(500, 42)).toEqual(generateOutlets(500, 42));
    expect(generateOutlets(200, 7)).toEqual(sample.slice(0, 200));
    expect(Array.from(outletStream(300, 42, { domainTag: 'x1' }))).toEqual(generateOutlets(300, 42, { domainTag: 'x1' }));
    const a = generateOutlets(200, 42);
    const b = generateOutlets(200, 43);
    expect(a).not.toEqual(b);
    const shared = a.filter((o, i) => o.name === b[i]!.name).length;
    expect(shared).toBeLessThan(20);
  });

  it('yields exactly count outlets and rejects bad arguments', () => {
    expect(generateOutlets(0, 1)).toEqual([]);
    expect(generateOutlets(1, 1)).toHaveLength(1);
    expect(() => generateOutlets(-1, 1)).toThrow(RangeError);
    expect(() => generateOutlets(1.5, 1)).toThrow(RangeError);
    expect(() => generateOutlets(1, 1, { domainTag: 'Not A Tag' })).toThrow(RangeError);
  });

  it('every outlet passes the import schema unchanged', () => {
    for (const [seed, tag] of [[7, undefined], [1, runDomainTag(2_147_483_647, 4_294_967_295)], [99, 'demo']] as const) {
      const outlets = seed === 7 ? sample : generateOutlets(1_000, seed, tag ? { domainTag: tag } : {});
      for (const o of outlets) {
        const parsed = outletInput.safeParse(withoutBaseline(o));
        if (!parsed.success) throw new Error(`${o.domain}: ${JSON.stringify(parsed.error.issues[0])}`);
        // Nothing is normalised away: the generator already emits the canonical form.
        expect(parsed.data).toEqual(withoutBaseline(o));
        if (tag) expect(o.domain.split('.')[0]!.endsWith(`-${tag}`)).toBe(true);
      }
    }
  });

  it('gives unique domains across a large run, and tagged runs never share a domain', () => {
    const big = generateOutlets(30_000, 3);
    expect(new Set(big.map((o) => o.domain)).size).toBe(big.length);
    // Collisions of names are resolved with a numeric suffix.
    expect(big.some((o) => /[a-z]\d+\./.test(o.domain))).toBe(true);
    const p1 = generateOutlets(2_000, 1, { domainTag: runDomainTag(1, 1) }).map((o) => o.domain);
    const p2 = generateOutlets(2_000, 1, { domainTag: runDomainTag(11, 1) }).map((o) => o.domain);
    const p3 = generateOutlets(2_000, 11, { domainTag: runDomainTag(1, 11) }).map((o) => o.domain);
    expect(new Set([...p1, ...p2, ...p3]).size).toBe(6_000);
  });

  it('pairs countries with their languages and TLD-like domains', () => {
    const lang: Record<string, string> = { US: 'en', GB: 'en', CA: 'en', AU: 'en', IN: 'en', DE: 'de', AT: 'de', FR: 'fr', ES: 'es', IT: 'it', NL: 'nl', SE: 'sv', PL: 'pl', BR: 'pt', JP: 'ja' };
    const countries = new Set(sample.map((o) => o.country));
    for (const c of Object.keys(lang)) expect(countries).toContain(c);
    for (const o of sample) {
      if (lang[o.country]) expect(o.language).toBe(lang[o.country]);
    }
    const tlds = new Set(sample.map((o) => o.domain.slice(o.domain.indexOf('.') + 1)));
    for (const t of ['com', 'co.uk', 'de', 'fr', 'io', 'net']) expect(tlds).toContain(t);
    expect(sample.filter((o) => o.country === 'DE').every((o) => /\.(de|com|net)$/.test(o.domain))).toBe(true);
  });

  it('has mixed types, 1–4 topics and descriptions that name them', () => {
    expect(new Set(sample.map((o) => o.type))).toEqual(new Set(['blog', 'news', 'magazine', 'niche_site', 'press']));
    const counts = new Set(sample.map((o) => o.topics.length));
    expect(counts).toEqual(new Set([1, 2, 3, 4]));
    for (const o of sample) {
      expect(new Set(o.topics).size).toBe(o.topics.length);
      expect(o.description).toMatch(/covering .+\.$/);
      expect(o.name.length).toBeGreaterThan(3);
    }
    expect(new Set(sample.flatMap((o) => o.topics)).size).toBeGreaterThanOrEqual(20);
    expect(new Set(sample.map((o) => o.name)).size).toBeGreaterThan(N * 0.8);
  });

  it('has a long-tailed traffic distribution and about 60% verified, more often for big outlets', () => {
    const visits = sample.map((o) => o.traffic.monthly_visits).sort((a, b) => a - b);
    const med = quantile(visits, 0.5);
    expect(med).toBeGreaterThanOrEqual(1_000);
    expect(med).toBeLessThan(20_000);
    const top1 = visits.slice(-Math.ceil(N / 100));
    expect(top1.reduce((s, v) => s + v, 0) / top1.length).toBeGreaterThan(50 * med);
    expect(visits.at(-1)!).toBeGreaterThan(1_000_000);

    const verifiedShare = sample.filter((o) => o.traffic.verified).length / N;
    expect(verifiedShare).toBeGreaterThan(0.5);
    expect(verifiedShare).toBeLessThan(0.7);
    const byTraffic = [...sample].sort((a, b) => a.traffic.monthly_visits - b.traffic.monthly_visits);
    const share = (xs: OutletWithBaseline[]) => xs.filter((o) => o.traffic.verified).length / xs.length;
    expect(share(byTraffic.slice(-N / 10))).toBeGreaterThan(share(byTraffic.slice(0, N / 10)) + 0.2);
  });

  it('has 1–4 offers of mixed formats with unique (format, title) and traffic-correlated prices', () => {
    expect(new Set(sample.map((o) => o.offers.length))).toEqual(new Set([1, 2, 3, 4]));
    const offers = sample.flatMap((o) => o.offers);
    expect(new Set(offers.map((f) => f.format))).toEqual(new Set(['guest_post', 'sponsored_article', 'link_insertion', 'press_release']));
    expect(new Set(offers.map((f) => f.content_by))).toEqual(new Set(['buyer', 'publisher']));
    expect(new Set(offers.map((f) => f.link_type))).toEqual(new Set(['dofollow', 'nofollow']));
    expect(new Set(offers.map((f) => f.sponsored_label))).toEqual(new Set([true, false]));
    expect(new Set(offers.map((f) => f.permanent))).toEqual(new Set([true, false]));
    for (const o of sample) {
      expect(new Set(o.offers.map((f) => `${f.format}|${f.title}`)).size).toBe(o.offers.length);
    }
    for (const f of offers) {
      expect(f.publisher_price_cents).toBeGreaterThanOrEqual(2_000);
      expect(f.publisher_price_cents).toBeLessThanOrEqual(500_000);
      expect(f.max_words).toBeGreaterThanOrEqual(f.min_words);
      if (f.format === 'link_insertion') expect(f.turnaround_days).toBeLessThanOrEqual(5);
    }
    const prices = offers.map((f) => f.publisher_price_cents);
    expect(prices.filter((p) => p < 10_000).length).toBeGreaterThan(offers.length * 0.1);
    expect(prices.filter((p) => p > 100_000).length).toBeGreaterThan(0);
    const byTraffic = [...sample].sort((a, b) => a.traffic.monthly_visits - b.traffic.monthly_visits);
    const cheapest = (o: OutletWithBaseline) => Math.min(...o.offers.map((f) => f.publisher_price_cents));
    expect(median(byTraffic.slice(-N / 10).map(cheapest))).toBeGreaterThan(3 * median(byTraffic.slice(0, N / 10).map(cheapest)));
  });

  it('gives a plausible baseline track record, empty when there are no orders', () => {
    let empty = 0;
    for (const o of sample) {
      const b = o.baseline!;
      expect(b.ordersCompleted).toBeGreaterThanOrEqual(0);
      expect(b.ordersCompleted).toBeLessThanOrEqual(500);
      if (b.ordersCompleted === 0) {
        empty++;
        expect(b).toEqual({ ordersCompleted: 0, onTimeRate: null, acceptanceRate: null, avgTurnaroundDays: null, rating: null });
        continue;
      }
      for (const rate of [b.onTimeRate!, b.acceptanceRate!]) {
        expect(rate).toBeGreaterThanOrEqual(0.6);
        expect(rate).toBeLessThanOrEqual(1);
        expect(decimals(rate)).toBeLessThanOrEqual(3);
      }
      expect(b.rating!).toBeGreaterThanOrEqual(3);
      expect(b.rating!).toBeLessThanOrEqual(5);
      expect(decimals(b.rating!)).toBeLessThanOrEqual(1);
      expect(b.avgTurnaroundDays!).toBeGreaterThanOrEqual(1);
      expect(decimals(b.avgTurnaroundDays!)).toBeLessThanOrEqual(1);
      // Figures a record of that many whole orders can have: k of n on time, n of m requests
      // accepted, whole stars averaged (1 order on time 0.603 of the time is a contradiction).
      const n = b.ordersCompleted;
      const near = (x: number, y: number, decimalsKept: number) => Math.abs(x - y) <= 0.5 * 10 ** -decimalsKept + 1e-9;
      const some = (from: number, to: number, ok: (i: number) => boolean) => Array.from({ length: to - from + 1 }, (_, i) => from + i).some(ok);
      expect(some(0, n, (k) => near(k / n, b.onTimeRate!, 3)), `on_time_rate ${b.onTimeRate} over ${n} orders`).toBe(true);
      expect(some(n, Math.ceil(n / 0.6), (m) => near(n / m, b.acceptanceRate!, 3)), `acceptance_rate ${b.acceptanceRate} over ${n} orders`).toBe(true);
      expect(some(n, 5 * n, (stars) => near(stars / n, b.rating!, 1)), `rating ${b.rating} over ${n} orders`).toBe(true);
      if (n === 1) expect(Number.isInteger(b.rating!) && Number.isInteger(b.onTimeRate!), 'one order: whole figures').toBe(true);
    }
    expect(empty).toBeGreaterThan(N * 0.1);
    expect(empty).toBeLessThan(N * 0.3);
    expect(Math.max(...sample.map((o) => o.baseline!.ordersCompleted))).toBeGreaterThan(300);
  });

  it('stores in the database: upsert inserts, a re-run updates with the baseline kept', async () => {
    const pub = await createPublisher(database.pool, 'Generator pub');
    const outlets = generateOutlets(1_000, 5, { domainTag: runDomainTag(pub.id, 5) });
    expect(await upsertOutlets(database.pool, pub.id, outlets, 0.2)).toEqual({ imported: 1_000, updated: 0 });
    expect(await upsertOutlets(database.pool, pub.id, generateOutlets(1_000, 5, { domainTag: runDomainTag(pub.id, 5) }), 0.2)).toEqual({
      imported: 0,
      updated: 1_000,
    });
    const { rows } = await database.pool.query(
      `SELECT count(*)::int AS outlets, (SELECT count(*)::int FROM offers f JOIN outlets o ON o.id = f.outlet_id WHERE o.publisher_id = $1) AS offers,
              count(*) FILTER (WHERE base_rating IS NOT NULL)::int AS rated
         FROM outlets WHERE publisher_id = $1`,
      [pub.id],
    );
    expect(rows[0]).toEqual({
      outlets: 1_000,
      offers: outlets.reduce((s, o) => s + o.offers.length, 0),
      rated: outlets.filter((o) => o.baseline!.rating !== null).length,
    });
    const first = outlets[0]!;
    const stored = await database.pool.query(
      `SELECT base_orders_completed, base_on_time_rate, base_rating, monthly_visits, topics FROM outlets WHERE domain = $1`,
      [first.domain],
    );
    expect(stored.rows[0]).toEqual({
      base_orders_completed: first.baseline!.ordersCompleted,
      base_on_time_rate: first.baseline!.onTimeRate === null ? null : first.baseline!.onTimeRate.toFixed(3),
      base_rating: first.baseline!.rating === null ? null : first.baseline!.rating.toFixed(1),
      monthly_visits: first.traffic.monthly_visits,
      topics: first.topics,
    });
  });

  it('the demo seed gives the demo publisher its generated outlets, once', async () => {
    const keys = await seedDemoIfEmpty(database, 0.2);
    expect(keys).toBeDefined();
    const { rows } = await database.pool.query(
      `SELECT count(*)::int AS outlets, count(DISTINCT o.domain)::int AS domains,
              (SELECT count(*)::int FROM outlets x WHERE x.publisher_id = $1 AND x.min_price_any IS NOT NULL) AS priced
         FROM outlets o WHERE o.publisher_id = $1`,
      [keys!.publisherId],
    );
    expect(rows[0]).toEqual({ outlets: DEMO_OUTLETS, domains: DEMO_OUTLETS, priced: DEMO_OUTLETS });
    expect(await seedDemoIfEmpty(database, 0.2)).toBeUndefined();
  });
});
