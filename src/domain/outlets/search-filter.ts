import type { OfferFormat, OutletType } from './enums.js';

// The filters of outlet search, defined once: what a filter means over the search index. REST and
// MCP map their parameters to a SearchFilter with filterOf(); the planner builds one for its
// candidates (several countries, languages and formats). docs/search.md ("adding a filter") says
// where a new one goes.

export interface SearchFilter {
  type?: OutletType | undefined;
  /** Any of these ISO 3166-1 alpha-2 codes. */
  countries?: readonly string[] | undefined;
  /** Any of these ISO 639-1 codes, lower case. */
  languages?: readonly string[] | undefined;
  topic?: string | undefined;
  /** An active offer of one of these formats (of any format when absent)… */
  formats?: readonly OfferFormat[] | undefined;
  /** …costing at most this, fees included. */
  maxPriceCents?: number | undefined;
  verifiedTraffic?: boolean | undefined;
  minTraffic?: number | undefined;
}

/** The filter parameters as the REST query and the MCP tool parse them (prices already in cents). */
export interface FilterParams {
  type?: OutletType | undefined;
  format?: OfferFormat | undefined;
  country?: string | undefined;
  language?: string | undefined;
  topic?: string | undefined;
  max_price_cents?: number | undefined;
  verified_traffic?: boolean | undefined;
  min_traffic?: number | undefined;
}

/** The one mapping from a request's filter parameters to a filter. */
export function filterOf(p: FilterParams): SearchFilter {
  return {
    type: p.type,
    countries: p.country === undefined ? undefined : [p.country],
    languages: p.language === undefined ? undefined : [p.language],
    topic: p.topic,
    formats: p.format === undefined ? undefined : [p.format],
    maxPriceCents: p.max_price_cents,
    verifiedTraffic: p.verified_traffic,
    minTraffic: p.min_traffic,
  };
}

/** What a filter may read of the index. */
export interface FilterView {
  /** Bits of the slots with this value of a coded column; undefined when no outlet has it. */
  valueBits(column: 'type' | 'country' | 'language' | 'topic', value: string): Uint32Array | undefined;
  /** Bits of the slots with (true) or without traffic verification. */
  verifiedBits(on: boolean): Uint32Array;
  /** Bits of the slots with an active offer of the format (`any`: of any format). */
  offerBits(format: OfferFormat | 'any'): Uint32Array;
  /**
   * Per slot, the cheapest active offer of the format (NaN: none). Read within one search: a
   * write that grows the index replaces the array.
   */
  pricesOf(format: OfferFormat | 'any'): Float64Array;
  /** Per slot, the monthly visits (read within one search, as `pricesOf`). */
  visitsBySlot(): Float64Array;
  /**
   * For a bound of `atMost` cents on the format's price: the bits of the slots priced at most the
   * nearest price step at or above it (`among`: every slot within the bound is there), and at most
   * the nearest step at or below it (`sure`: every slot there is within it). Undefined where no
   * step lies that way.
   */
  priceSteps(format: OfferFormat | 'any', atMost: number): { among: Uint32Array | undefined; sure: Uint32Array | undefined };
}

/**
 * A bound on a figure of each slot: a slot passes when one of `figures` at it lies within
 * [atLeast, atMost] (NaN, no figure, never does). Data rather than a function, so that the bitsets'
 * way tests every remaining match in a loop of its own (a call per match cost a tenth of a broad
 * search with a price bound at 1M outlets).
 */
export interface Bound {
  figures: Float64Array[];
  atLeast: number;
  atMost: number;
  /**
   * A price bound's steps (FilterView.priceSteps), when it reads one price: the bitsets' way ANDs
   * `among` in with the other filters and tests only the matches outside `sure` (none when the
   * bound is a step itself: $50, $100, $200…), where it tested every match.
   */
  among?: Uint32Array | undefined;
  sure?: Uint32Array | undefined;
}

/** Whether slot `s` passes the bound. */
export function within(b: Bound, s: number): boolean {
  for (const f of b.figures) {
    const v = f[s]!;
    if (v >= b.atLeast && v <= b.atMost) return true;
  }
  return false;
}

/**
 * What one filter does to the matches: the bitsets of its values (a match must have a bit in one
 * of them), or a bound each remaining match is tested against.
 */
export type Narrowing = { anyOf: (Uint32Array | undefined)[] } | { bound: Bound };

/**
 * Each filter, once. A filter absent from the request is skipped; a filter not listed here cannot
 * exist (the type requires every key of SearchFilter).
 */
export const FILTERS: { [K in keyof SearchFilter]-?: (v: NonNullable<SearchFilter[K]>, f: SearchFilter, ix: FilterView) => Narrowing } = {
  type: (v, _f, ix) => ({ anyOf: [ix.valueBits('type', v)] }),
  countries: (v, _f, ix) => ({ anyOf: v.map((c) => ix.valueBits('country', c)) }),
  languages: (v, _f, ix) => ({ anyOf: v.map((l) => ix.valueBits('language', l)) }),
  topic: (v, _f, ix) => ({ anyOf: [ix.valueBits('topic', v)] }),
  // Only outlets with an active offer (of a format asked for) are listed: always applied, below.
  formats: (v, _f, ix) => ({ anyOf: v.map((format) => ix.offerBits(format)) }),
  maxPriceCents: (max, f, ix) => {
    const formats = f.formats?.length ? f.formats : (['any'] as const);
    const steps = formats.length === 1 ? ix.priceSteps(formats[0]!, max) : {};
    return { bound: { figures: formats.map((format) => ix.pricesOf(format)), atLeast: -Infinity, atMost: max, ...steps } };
  },
  verifiedTraffic: (v, _f, ix) => ({ anyOf: [ix.verifiedBits(v)] }),
  minTraffic: (min, _f, ix) => ({ bound: { figures: [ix.visitsBySlot()], atLeast: min, atMost: Infinity } }),
};

/** The filter's narrowings, in the order of FILTERS; an outlet with no active offer is never listed. */
export function narrowings(f: SearchFilter, ix: FilterView): Narrowing[] {
  const out: Narrowing[] = [];
  if (!f.formats?.length) out.push({ anyOf: [ix.offerBits('any')] });
  for (const key of Object.keys(FILTERS) as (keyof SearchFilter)[]) {
    const v = f[key];
    if (v === undefined || (Array.isArray(v) && v.length === 0)) continue;
    out.push((FILTERS[key] as (v: unknown, f: SearchFilter, ix: FilterView) => Narrowing)(v, f, ix));
  }
  return out;
}

/** A stable key of a filter (remembered results). */
export function filterKey(f: SearchFilter): string {
  return JSON.stringify(Object.keys(FILTERS).map((k) => f[k as keyof SearchFilter] ?? null));
}
