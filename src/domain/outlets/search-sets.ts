import type { SlotOrder } from './search-order.js';

// The one set type a search's matches are, however they were found: as bitsets over every slot
// of the index (search-bits.ts: a broad word, a browse) or as the list of the matching slots
// (search-listed.ts: the rarest word is rare). The ranking rules (search-rules.ts), the phrase
// check and the count are written once against it, as Meilisearch's ranking rules narrow buckets
// of one set type; only what a step costs differs between the two.

/** The relevance tiers of a search's matches, as bits: the exact name or domain, every word in the name or domain, every word anywhere. */
export const EXACT = 1;
export const IN_NAME = 2;
export const ANYWHERE = 4;
export type Tier = typeof EXACT | typeof IN_NAME | typeof ANYWHERE;

/** What a set is split or narrowed by: one of its relevance tiers, or a set of the index (a bitset over every slot: the outlets with a figure). */
export type Part = Tier | Uint32Array;

/** A slot order and the direction it is read in. */
export interface Ordering {
  order: SlotOrder;
  reverse: boolean;
  /** No match has a figure of the order above this (a price bound on a price order): SlotOrder.firstIn. */
  upTo?: number | undefined;
}

/** A search's matches, or a bucket of them that a ranking rule split off. */
export interface SlotSet {
  /** Which way the matches were found ('bits', 'slots'). */
  readonly kind: 'bits' | 'slots';
  /** How many slots it holds. */
  size(): number;
  /** Its slots in `part` (first) and those not; each given back by `release`. */
  split(part: Part): [SlotSet, SlotSet];
  /** Its first `m` slots in the ordering. */
  first(m: number, ordering: Ordering): number[];
  /** Its slots not in `part`. */
  slotsOutside(part: Part): number[];
  /** Takes the slots that are not in `keep` out of the tier (the set keeps them). */
  narrowTier(tier: Tier, keep: Uint32Array): void;
  /** Keeps only the slots in `a` or in `b`. */
  keepIn(a: Part, b: Part): void;
  /** Gives back what it borrowed from the index: nothing may read it after. */
  release(): void;
}
