import { TypedFastBitSet } from 'typedfastbitset';
import type { SlotOrder } from './search-order.js';
import type { Scratch } from './search-scratch.js';
import { hasSlot, slotsOf } from './slot-bits.js';

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

/**
 * A set of slots a rule tests: a bitset over every slot, or (for a search whose matches are few
 * and kept as a list) a test of one slot, given with its place in that list.
 */
export type SlotTest = Uint32Array | ((slot: number, at: number) => boolean);

/**
 * A rule splits the bucket it is given in two: the slots in `first` (in `ordering` when the rule
 * decides their order, as a track-record figure does), then the rest.
 */
export interface RankingRule {
  first: SlotTest;
  ordering?: Ordering;
}

/** How many slots a bitset holds. */
export function popcount(bits: Uint32Array): number {
  return new TypedFastBitSet(undefined, bits).size();
}

/** The slots of a bucket that are (first) and are not (second) in `bits`, in bitsets from `scratch`. */
function split(bucket: Uint32Array, bits: Uint32Array, scratch: Scratch): [Uint32Array, Uint32Array] {
  const inside = scratch.take(bucket.length);
  const outside = scratch.take(bucket.length);
  for (let i = 0; i < bucket.length; i++) {
    inside[i] = bucket[i]! & bits[i]!;
    outside[i] = bucket[i]! & ~bits[i]!;
  }
  return [inside, outside];
}

/** Those in `first` first (a relevance tier: the exact name, every word in the name, …), then the rest. */
export const having = (first: SlotTest): RankingRule => ({ first });

/** Those with a track-record figure (`bits`) first, in the figure's own order; then the rest. */
export const figured = (bits: Uint32Array, ordering: Ordering): RankingRule => ({ first: bits, ordering });

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
 * The first `m` slots of `universe` (a bitset) under the rules, then `ordering` (unless a rule's
 * bucket set its own).
 */
export function rank(universe: Uint32Array, rules: readonly RankingRule[], ordering: Ordering, m: number, scratch: Scratch): number[] {
  const out: number[] = [];
  const visit = (bits: Uint32Array, rule: number, within: Ordering) => {
    const size = popcount(bits);
    if (size === 0) return;
    if (rule === rules.length) {
      out.push(...firstOf(bits, size, Math.min(m - out.length, size), within));
      return;
    }
    const { first, ordering: own } = rules[rule]!;
    if (!(first instanceof Uint32Array)) throw new Error('a bitset bucket is split by a bitset');
    const [inside, outside] = split(bits, first, scratch);
    visit(inside, rule + 1, own ?? within);
    if (out.length < m) visit(outside, rule + 1, within);
    scratch.give(inside, outside);
  };
  if (m > 0) visit(universe, 0, ordering);
  return out;
}

/**
 * The same rules over a search's matches kept as a list of slots (few of them): each rule
 * partitions its bucket by a test per slot, and the last bucket's first slots are picked by the
 * ordering's comparison, keeping only the best `m` seen (no sort of the whole bucket).
 */
export function rankSlots(slots: readonly number[], rules: readonly RankingRule[], ordering: Ordering, m: number): number[] {
  const out: number[] = [];
  // Buckets hold places in `slots`, so that a rule's test is told where a slot is.
  const visit = (bucket: readonly number[], rule: number, within: Ordering) => {
    if (bucket.length === 0) return;
    if (rule === rules.length) {
      out.push(...bestOf(bucket.map((at) => slots[at]!), m - out.length, within));
      return;
    }
    const { first, ordering: own } = rules[rule]!;
    const inside: number[] = [];
    const outside: number[] = [];
    for (const at of bucket) {
      const s = slots[at]!;
      ((first instanceof Uint32Array ? hasSlot(first, s) : first(s, at)) ? inside : outside).push(at);
    }
    visit(inside, rule + 1, own ?? within);
    if (out.length < m) visit(outside, rule + 1, within);
  };
  if (m > 0) visit(Array.from(slots.keys()), 0, ordering);
  return out;
}

/** The first `m` of the slots in the ordering: a sorted buffer of the best seen, most slots rejected by one comparison. */
function bestOf(slots: readonly number[], m: number, { order, reverse }: Ordering): number[] {
  const cmp = reverse ? (a: number, b: number) => order.before(b, a) : order.before;
  const best: number[] = [];
  if (m <= 0) return best;
  for (const s of slots) {
    if (best.length === m && cmp(s, best[m - 1]!) >= 0) continue;
    let lo = 0;
    let hi = best.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cmp(best[mid]!, s) < 0) lo = mid + 1;
      else hi = mid;
    }
    best.splice(lo, 0, s);
    if (best.length > m) best.pop();
  }
  return best;
}
