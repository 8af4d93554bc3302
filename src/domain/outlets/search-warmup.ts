import type { OfferFormat, OutletSort } from './enums.js';
import { outletSorts } from './enums.js';
import type { Found, SearchRequest } from './search-request.js';
import { type FilterParams, filterOf } from './search-filter.js';
import type { SearchIndex } from './search-index.js';
import { MAX_COMPLETIONS } from './search-terms.js';
import { STOP_WORDS } from './search-text.js';

// A freshly loaded index answers its first searches several times slower than later ones: every
// loop over its bitsets (a million outlets: 31,250 words a pass, a dozen passes a search) runs in
// V8's interpreter until the optimising compiler, a background thread that a busy machine leaves
// waiting, has compiled it, and each new shape (a sort, a filter, the listed way, completions)
// starts over. Measured at 1M outlets (bench/RESULTS.md, issue 56): the first rounds of real
// traffic took 4–5 times the CPU a search takes later and held the event loop up for hundreds of
// milliseconds at a time, /healthz included. So the engine answers these searches itself, over
// the new index, before it says it is ready (or swaps a reloaded index in): every sort, each kind
// of filter, broad and rare words (the bitsets' way and the listed way), one and two words, a
// quoted phrase, a page picked and counted.
//
// They are asked the way a client's are (`ask`: the engine's own path from a request's text to
// its page), with filters made by filterOf() as REST and MCP make them. Searches built by hand
// (a filter object with only its one field, words given as lexemes) were compiled for objects of
// other shapes: real traffic then undid the compiled code ("wrong map") and the first seconds
// after ready were slow again (issue 56: 61 such undoings in the first four seconds, p99 over
// 100 ms in the first). The completions of the catalog's most used words are worked out here too:
// each was the first search's cost for its word. Of all this only caches are kept (the index's
// completions, the engine's word forms).

/** Searches answered before a big index is used (WARM_FULL_AT outlets or more). */
export const WARM_SEARCHES = 1_000;
/** Outlets from which the warm-up answers all of WARM_SEARCHES. */
const WARM_FULL_AT = 100_000;
/** The catalog's most used words whose completions are worked out ahead (the index keeps 2,000). */
export const WARM_COMPLETIONS = 2_000;

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

/** A search asked as a client's is: its text parsed, its words looked up, its page and total. */
export type Ask = (req: SearchRequest) => Promise<Found>;

/** One of the warm-up's searches, as a client sends it: text, filter parameters, sort and page. */
export interface WarmSearch {
  q: string | undefined;
  params: FilterParams;
  sort: OutletSort;
  page: number;
  perPage: number;
}

const FORMATS: OfferFormat[] = ['guest_post', 'sponsored_article', 'link_insertion', 'press_release'];
const PAGE_SIZES = [10, 15, 25, 50];

/** The filter parameters the warm-up cycles through: none, each kind alone, and a few together. */
function filters(index: SearchIndex): FilterParams[] {
  const { countries, languages, topics } = index.filterValues();
  const out: FilterParams[] = [{}, { verified_traffic: true }, { verified_traffic: false }, { max_price_cents: 20_000 }, { min_traffic: 10_000 }];
  for (const c of countries) out.push({ country: c }, { country: c, max_price_cents: 50_000 });
  for (const l of languages) out.push({ language: l });
  for (const t of topics) out.push({ topic: t }, { topic: t, country: countries[0] });
  for (const f of FORMATS) out.push({ format: f }, { format: f, max_price_cents: 30_000 });
  out.push({ country: countries[0], language: languages[0], format: FORMATS[0], verified_traffic: true });
  return out;
}

/**
 * The i-th warm-up search's text: none (a browse), one or two words, now and then a phrase. Only
 * words the catalog knows: an unknown one is corrected by PostgreSQL (a scan of the terms of about
 * its length), which would make the warm-up wait, not warm anything more.
 */
function textOf(words: string[], i: number): string | undefined {
  if (i % 5 === 4 || words.length === 0) return undefined;
  const a = words[i % words.length]!;
  const b = words[(i * 7 + 3) % words.length]!;
  if (i % 41 === 0) return `"${a} ${b}"`;
  return i % 3 === 2 ? `${a} ${b}` : a;
}

/**
 * The warm-up's first `count` searches over `index`: every sort, each kind of filter, broad and
 * rare words (the bitsets' way and the listed way), one and two words, a quoted phrase, pages
 * 1–3 of several sizes. The same list each time for the same index.
 */
export function warmSearchesOf(index: SearchIndex, count: number): WarmSearch[] {
  // Words spread over the vocabulary (broad to rare: the bitsets' way and the listed way) and the
  // catalog's most used, which clients ask most (with those 200 the first 200 searches after ready
  // at 1M outlets took 1.35–1.51 CPU-ms each against 1.62–2.31 without: two runs each, one after
  // the other, a small effect; bench/RESULTS.md).
  // A stop word alone asks for nothing (no search is made).
  const words = [...index.sampleWords(48), ...index.commonWords(200)].filter((w) => !STOP_WORDS.has(w));
  const kinds = filters(index);
  const sorts: readonly (OutletSort | undefined)[] = [undefined, ...outletSorts];
  return Array.from({ length: count }, (_, i) => {
    const q = textOf(words, i);
    return {
      q,
      params: kinds[(i * 5) % kinds.length]!,
      sort: sorts[i % sorts.length] ?? (q ? 'relevance' : '-traffic'),
      page: 1 + (i % 3),
      perPage: PAGE_SIZES[i % PAGE_SIZES.length]!,
    };
  });
}

/**
 * Works out the completions of the most used words, then answers `count` searches through `ask`,
 * giving the event loop back between them (`yieldEvery`): at the first load nothing else waits,
 * but an index reloaded beside the current one is warmed while that one keeps answering. Nothing
 * at all for a catalog too small to need it (`warmSearches`).
 */
export async function warmUp(
  index: SearchIndex,
  ask: Ask,
  count = warmSearches(index.counts.live),
  yieldEvery: () => Promise<void> = () => new Promise((r) => setImmediate(r)),
): Promise<void> {
  if (count <= 0) return;
  const common = index.commonWords(WARM_COMPLETIONS);
  for (let i = 0; i < common.length; i++) {
    index.completions(common[i]!, MAX_COMPLETIONS);
    if (i % 64 === 63) await yieldEvery();
  }
  const searches = warmSearchesOf(index, count);
  for (let i = 0; i < searches.length; i++) {
    const { q, params, sort, page, perPage } = searches[i]!;
    await ask({ q, filter: filterOf(params), sort, offset: perPage * (page - 1), limit: perPage });
    if (i % 8 === 7) await yieldEvery();
  }
}
