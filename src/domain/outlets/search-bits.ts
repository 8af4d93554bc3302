import { TypedFastBitSet } from 'typedfastbitset';
import type { SlotOrder } from './search-order.js';
import type { Scratch } from './search-scratch.js';
import { EXACT, IN_NAME, type Ordering, type Part, type SlotSet, type Tier } from './search-sets.js';
import { bitsIn, slotsOf } from './slot-bits.js';

// The bitsets' way of holding a search's matches (search-sets.ts): a bitset over every slot of the
// index, and its relevance tiers as bitsets of the same size. Splitting a bucket is a pass of ANDs
// over its words; its first slots are found by walking a slot order or by sorting its slots.

/** The tiers of a search's matches: bitsets over every slot (the filters are not applied to them, only to the matches). */
export interface TierBits {
  /** The exact name or domain. */
  exact: Uint32Array;
  /** Every word in the name or domain (name_vector). */
  inName: Uint32Array;
  /** Every word anywhere (search_vector). */
  anywhere: Uint32Array;
  /** No outlet has the exact name or domain (most searches): `exact` is all zeros. */
  noExact: boolean;
}

/** The bits of an empty bucket, which nothing reads (its size is 0). */
const NONE = new Uint32Array(0);

/** How many slots a bitset holds. */
export function popcount(bits: Uint32Array): number {
  return new TypedFastBitSet(undefined, bits).size();
}

/** A search's matches (or a bucket of them) as a bitset over every slot. */
export class BitSlots implements SlotSet {
  readonly kind = 'bits';

  /**
   * `lent`: the bitsets `scratch` lent to it, given back by `release` (a search's matches: its
   * bitset and its tiers'; a bucket: its own). `count`: how many slots it holds, when known
   * (-1: not yet, or changed since).
   */
  constructor(
    readonly bits: Uint32Array,
    private readonly tiers: TierBits,
    private readonly scratch: Scratch,
    private readonly lent: Uint32Array[],
    private count = -1,
  ) {}

  size(): number {
    if (this.count < 0) this.count = popcount(this.bits);
    return this.count;
  }

  private partBits(part: Part): Uint32Array {
    if (typeof part !== 'number') return part;
    return part === EXACT ? this.tiers.exact : part === IN_NAME ? this.tiers.inName : this.tiers.anywhere;
  }

  split(part: Part): [BitSlots, BitSlots] {
    const size = this.size();
    if (part === EXACT && this.tiers.noExact) {
      // Nothing is in the tier: no pass over the bucket, which is shared as the outside (lent
      // nothing, so releasing the halves gives back nothing of this one).
      return [new BitSlots(NONE, this.tiers, this.scratch, [], 0), new BitSlots(this.bits, this.tiers, this.scratch, [], size)];
    }
    const bucket = this.bits;
    const bits = this.partBits(part);
    const inside = this.scratch.takeAny(bucket.length);
    const outside = this.scratch.takeAny(bucket.length);
    // The two halves are counted in the same pass (the rules ask each one's size next): the
    // outside holds the rest of the bucket, so only the inside's bits are counted.
    let n = 0;
    for (let i = 0; i < bucket.length; i++) {
      const word = bucket[i]!;
      const x = word & bits[i]!;
      inside[i] = x;
      outside[i] = word ^ x;
      if (x !== 0) n += bitsIn(x);
    }
    return [new BitSlots(inside, this.tiers, this.scratch, [inside], n), new BitSlots(outside, this.tiers, this.scratch, [outside], size - n)];
  }

  first(m: number, ordering: Ordering): number[] {
    return firstOf(this.bits, this.size(), m, ordering);
  }

  slotsOutside(part: Part): number[] {
    const bits = this.partBits(part);
    const outside = this.scratch.takeAny(this.bits.length);
    for (let i = 0; i < outside.length; i++) outside[i] = this.bits[i]! & ~bits[i]!;
    const slots = slotsOf(outside);
    this.scratch.give(outside);
    return slots;
  }

  narrowTier(tier: Tier, keep: Uint32Array): void {
    const bits = this.partBits(tier);
    for (let i = 0; i < bits.length; i++) bits[i]! &= keep[i]!;
  }

  keepIn(a: Part, b: Part): void {
    const x = this.partBits(a);
    const y = this.partBits(b);
    const bits = this.bits;
    for (let i = 0; i < bits.length; i++) bits[i]! &= x[i]! | y[i]!;
    this.count = -1;
  }

  release(): void {
    this.scratch.give(...this.lent.splice(0));
  }

  /** Its bitset, kept by the caller; the rest it borrowed goes back. */
  keep(): Uint32Array {
    this.scratch.give(...this.lent.splice(0).filter((b) => b !== this.bits));
    return this.bits;
  }
}

/**
 * The first `m` of a bucket's `size` slots in the ordering. Walking the order costs a bit test per
 * slot passed, about m × (slots the walk may pass) / size of them; sorting the bucket's slots about
 * size × log2(size) comparisons, each worth several bit tests: whichever is cheaper.
 */
export function firstOf(bits: Uint32Array, size: number, m: number, { order, reverse, upTo }: Ordering): number[] {
  return (m * order.span(upTo)) / size <= size * Math.log2(size + 1) * 8 ? walkFirst(bits, m, order, reverse, upTo) : sortFirst(bits, m, order, reverse);
}

/** The first `m` slots of the order whose bit is set (none has a figure above `upTo`). */
export function walkFirst(bits: Uint32Array, m: number, order: SlotOrder, reverse: boolean, upTo?: number): number[] {
  return order.firstIn(bits, m, reverse, upTo).slots;
}

/** The set slots, sorted by the order, the first `m`. */
export function sortFirst(bits: Uint32Array, m: number, order: SlotOrder, reverse: boolean): number[] {
  const slots = slotsOf(bits);
  slots.sort(reverse ? (a, b) => order.before(b, a) : order.before);
  return slots.slice(0, m);
}
