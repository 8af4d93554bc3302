import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../../src/demo/outlet-generator.js';
import type { OfferFormat } from '../../../src/domain/outlets/enums.js';
import { type IndexRow, PRICE_STEPS, SearchIndex } from '../../../src/domain/outlets/search-index.js';
import { OutletQuery } from '../../../src/domain/outlets/search-query.js';

// A price bound over the index alone (no database): the bitsets of the price steps decide most of
// it ($50 on a step: those bits only; $150 between two: the matches between them read one by one),
// and a price sort walks only the part of its order at or below the bound. Each page and count must
// be what reading every outlet's price gives: prices on a step, a cent either side, none at all;
// outlets loaded (the order merged) and written after (its sorted tail), some of them rewritten.

const NO_CHECKS = { n30: 0, a30: 0, n60: 0, a60: 0, nv: 0, pv: 0 };
const FORMATS = ['guest_post', 'sponsored_article', 'link_insertion', 'press_release'] as const;

/** A price near a step (on it, a cent below or above), or anywhere up to $15,000; null: no offer. */
function priceOf(rnd: () => number): number | null {
  if (rnd() < 0.3) return null;
  if (rnd() < 0.5) return PRICE_STEPS[Math.floor(rnd() * PRICE_STEPS.length)]! + Math.floor(rnd() * 3) - 1;
  return 1 + Math.floor(rnd() * 1_500_000);
}

function rowOf(id: number, rnd: () => number): IndexRow {
  const p = FORMATS.map(() => priceOf(rnd));
  const priced = p.filter((x): x is number => x !== null);
  return {
    id,
    name: `outlet ${id}`,
    domain: `o${id}.example`,
    type: 'blog',
    country: 'US',
    language: 'en',
    verified: false,
    visits: Math.floor(rnd() * 50) * 1_000,
    p0: priced.length ? Math.min(...priced) : null,
    p1: p[0]!,
    p2: p[1]!,
    p3: p[2]!,
    p4: p[3]!,
    topics: '',
    terms: 'news',
    name_terms: 'news',
    topic_terms: '',
    on_time: null,
    acceptance: null,
    rating: null,
  };
}

describe('a price bound over the index', () => {
  it('gives the count and the price-sorted pages that reading every price gives, on a step, between steps and beyond them', async () => {
    const rnd = mulberry32(56);
    const index = new SearchIndex();
    const rows = new Map<number, IndexRow>();
    const put = (r: IndexRow) => {
      rows.set(r.id, r);
      index.put(r, NO_CHECKS);
    };
    for (let id = 1; id <= 6_000; id++) put(rowOf(id, rnd));
    await index.settle(() => Promise.resolve());
    // Written after the load: new outlets and new versions of loaded ones (their old slots die).
    for (let i = 0; i < 400; i++) put(rowOf(rnd() < 0.5 ? 6_001 + i : 1 + Math.floor(rnd() * 6_000), rnd));

    const priceIn = (r: IndexRow, format: OfferFormat | undefined) => (format === undefined ? r.p0 : r[`p${FORMATS.indexOf(format) + 1}` as 'p1'])!;
    const bounds = [...PRICE_STEPS.flatMap((s) => [s - 1, s, s + 1]), 500, 15_000, 2_000_000];
    for (const format of [undefined, 'guest_post', 'press_release'] as const) {
      for (const max of bounds) {
        const filter = { maxPriceCents: max, formats: format ? [format] : undefined };
        const within = [...rows.values()].filter((r) => priceIn(r, format) !== null && priceIn(r, format) <= max);
        const cheapest = within.sort((a, b) => priceIn(a, format) - priceIn(b, format) || a.id - b.id).map((r) => r.id);
        for (const m of [1, 10, 60]) {
          const query = new OutletQuery(index, undefined, filter);
          const label = `${format ?? 'any'} ≤ ${max}, first ${m}`;
          expect(query.total(), label).toBe(cheapest.length);
          expect(query.page('price', false, m), `${label}, price`).toEqual(cheapest.slice(0, m));
          expect(query.page('-price', false, m), `${label}, -price`).toEqual([...cheapest].reverse().slice(0, m));
          query.release();
        }
      }
    }
  });
});
