import type { OfferFormat, OutletSort } from './enums.js';
import { outletSorts } from './enums.js';
import type { SearchFilter } from './search-filter.js';
import type { SearchIndex, TextQuery } from './search-index.js';
import { OutletQuery } from './search-query.js';
import { parseQuery } from './search-text.js';

// A freshly loaded index answers its first searches several times slower than later ones: every
// loop over its bitsets (a million outlets: 31,250 words a pass, a dozen passes a search) runs in
// V8's interpreter until the optimising compiler, a background thread that a busy machine leaves
// waiting, has compiled it, and each new shape (a sort, a filter, the listed way, completions)
// starts over. Measured at 1M outlets (bench/RESULTS.md, issue 56): the first rounds of real
// traffic took 4–5 times the CPU a search takes later and held the event loop up for hundreds of
// milliseconds at a time, /healthz included. So the engine answers these searches itself, over
// the new index, before it says it is ready (or swaps a reloaded index in): every sort, each kind
// of filter, broad and rare words (the bitsets' way and the listed way), one and two words, the
// completions of a word, a page picked and counted. Of them only the completions are kept (the
// index's own cache, which a new word clears).

/** Searches answered before a big index is used (WARM_FULL_AT outlets or more). */
export const WARM_SEARCHES = 1_000;
/** Outlets from which the warm-up answers all of WARM_SEARCHES. */
const WARM_FULL_AT = 100_000;

/**
 * How many searches warm an index of `outlets` live outlets: a share of WARM_SEARCHES in proportion
 * to the catalog, none below a hundred outlets. What a cold search costs grows with the catalog (a
 * pass over 400 outlets is 13 words, against 31,250 at a million): on a small catalog the first
 * searches are cheap even unoptimised, while 1,000 searches at every start cost a test-sized app
 * tens of CPU-milliseconds, and the test suite builds about 190 apps a run.
 */
export function warmSearches(outlets: number): number {
  return Math.min(WARM_SEARCHES, Math.floor((outlets * WARM_SEARCHES) / WARM_FULL_AT));
}

const FORMATS: OfferFormat[] = ['guest_post', 'sponsored_article', 'link_insertion', 'press_release'];

/** The filters the warm-up cycles through: none, each kind alone, and a few together. */
function filters(index: SearchIndex): SearchFilter[] {
  const { countries, languages, topics } = index.filterValues();
  const out: SearchFilter[] = [{}, { verifiedTraffic: true }, { verifiedTraffic: false }, { maxPriceCents: 20_000 }, { minTraffic: 10_000 }];
  for (const c of countries) out.push({ countries: [c] }, { countries: [c], maxPriceCents: 50_000 });
  for (const l of languages) out.push({ languages: [l] });
  for (const t of topics) out.push({ topic: t }, { topic: t, countries: countries.slice(0, 1) });
  for (const f of FORMATS) out.push({ formats: [f] }, { formats: [f], maxPriceCents: 30_000 });
  out.push({ countries: countries.slice(0, 3), languages: languages.slice(0, 2), formats: FORMATS.slice(0, 2) });
  return out;
}

/** A query as the engine builds it from words the index knows: the last one completed. */
function textOf(index: SearchIndex, words: string[]): TextQuery {
  const parsed = parseQuery(words.join(' '));
  return {
    exactName: parsed.exactName,
    domain: parsed.domain,
    groups: words.map((w, i) => ({ lexemes: i === words.length - 1 ? [w, ...index.completions(w, 20)] : [w] })),
  };
}

/**
 * Answers `count` searches over the index (its page and total, as a request would), giving the
 * event loop back between them (`yieldEvery`): at the first load nothing else waits, but an index
 * reloaded beside the current one is warmed while that one keeps answering.
 */
export async function warmUp(index: SearchIndex, count = warmSearches(index.counts.live), yieldEvery: () => Promise<void> = () => new Promise((r) => setImmediate(r))): Promise<void> {
  if (count <= 0) return;
  const words = index.sampleWords(48);
  const kinds = filters(index);
  const sorts: readonly OutletSort[] = outletSorts;
  for (let i = 0; i < count; i++) {
    const sort = sorts[i % sorts.length]!;
    const filter = kinds[(i * 5) % kinds.length]!;
    // Every fifth a browse (no words); every third of the rest two words.
    const text =
      i % 5 === 4 || words.length === 0
        ? undefined
        : textOf(index, i % 3 === 2 ? [words[i % words.length]!, words[(i * 7 + 3) % words.length]!] : [words[i % words.length]!]);
    const n = 10 + ((i * 13) % 66);
    const query = new OutletQuery(index, text, filter);
    query.total();
    query.page(sort === 'relevance' && !text ? '-traffic' : sort, text !== undefined, n);
    query.release();
    if (i % 8 === 7) await yieldEvery();
  }
}
