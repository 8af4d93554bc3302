import { TypedFastBitSet } from 'typedfastbitset';
import type { SlotOrder } from './search-order.js';
import { slotsOf } from './slot-bits.js';

// Ranking as rules over one universe of matches (a bitset over the index's slots), the way
// Meilisearch's ranking rules work: each rule splits the bucket it is given into smaller buckets,
// best first; the next rule splits each of those in turn; the last bucket order is a slot order
// (traffic, price, a track-record figure) read until the page is full. Only the buckets the page
// reaches are split at all.

/** A slot order and the direction it is read in. */
export interface Ordering {
  order: SlotOrder;
  reverse: boolean;
}

/** One bucket of a rule: its slots, and (for a rule that decides the order within it) the order. */
export interface Bucket {
  bits: Uint32Array;
  ordering?: Ordering;
}

/** Splits a bucket into disjoint buckets, best first, together holding all its slots. */
export type RankingRule = (bucket: Uint32Array) => Bucket[];

/** How many slots a bitset holds. */
export function popcount(bits: Uint32Array): number {
  return new TypedFastBitSet(undefined, bits).size();
}

/** The slots of a bucket that are (first) and are not (second) in `bits`. */
function split(bucket: Uint32Array, bits: Uint32Array): [Uint32Array, Uint32Array] {
  const b = new TypedFastBitSet(undefined, bucket);
  const other = new TypedFastBitSet(undefined, bits);
  return [b.new_intersection(other).words, b.new_difference(other).words];
}

/** Those in `bits` first (a relevance tier: the exact name, every word in the name, …), then the rest. */
export const having =
  (bits: Uint32Array): RankingRule =>
  (bucket) => {
    const [inside, outside] = split(bucket, bits);
    return [{ bits: inside }, { bits: outside }];
  };

/** Those with a track-record figure (`bits`) first, in the figure's own order; then the rest. */
export const figured =
  (bits: Uint32Array, ordering: Ordering): RankingRule =>
  (bucket) => {
    const [inside, outside] = split(bucket, bits);
    return [{ bits: inside, ordering }, { bits: outside }];
  };

/**
 * The first `m` of a bucket's `size` slots in the ordering. Walking the order costs a bit test per
 * slot passed, about m × (slots in the order) / size of them; sorting the bucket's slots about
 * size × log2(size) comparisons, each worth several bit tests: whichever is cheaper.
 */
export function firstOf(bits: Uint32Array, size: number, m: number, { order, reverse }: Ordering): number[] {
  return (m * order.length) / size <= size * Math.log2(size + 1) * 8 ? walkFirst(bits, m, order, reverse) : sortFirst(bits, m, order, reverse);
}

/** The first `m` slots of the order whose bit is set. */
export function walkFirst(bits: Uint32Array, m: number, order: SlotOrder, reverse: boolean): number[] {
  return order.firstIn(bits, m, reverse).slots;
}

/** The set slots, sorted by the order, the first `m`. */
export function sortFirst(bits: Uint32Array, m: number, order: SlotOrder, reverse: boolean): number[] {
  const slots = slotsOf(bits);
  slots.sort(reverse ? (a, b) => order.before(b, a) : order.before);
  return slots.slice(0, m);
}

/**
 * The first `m` slots of `universe` under the rules, then `ordering` (unless a rule's bucket set
 * its own).
 */
export function rank(universe: Uint32Array, rules: readonly RankingRule[], ordering: Ordering, m: number): number[] {
  const out: number[] = [];
  const visit = (bits: Uint32Array, rule: number, within: Ordering) => {
    const size = popcount(bits);
    if (size === 0) return;
    if (rule === rules.length) {
      out.push(...firstOf(bits, size, Math.min(m - out.length, size), within));
      return;
    }
    for (const b of rules[rule]!(bits)) {
      if (out.length >= m) return;
      visit(b.bits, rule + 1, b.ordering ?? within);
    }
  };
  if (m > 0) visit(universe, 0, ordering);
  return out;
}
