// The search index keeps sets of outlets as bitsets over its slots (a Uint32Array, bit s of
// word s >>> 5 for slot s). These two reads are shared by the ranking rules, the index and the
// planner's candidates.

/** Whether slot `s` is in the set. */
export const hasSlot = (bits: Uint32Array, s: number): boolean => (bits[s >>> 5]! & (1 << (s & 31))) !== 0;

/** The set's slots, ascending. */
export function slotsOf(bits: Uint32Array): number[] {
  const slots: number[] = [];
  for (let w = 0; w < bits.length; w++) {
    let b = bits[w]!;
    while (b !== 0) {
      const low = b & -b; // the lowest set bit
      b ^= low;
      slots.push((w << 5) + (31 - Math.clz32(low)));
    }
  }
  return slots;
}

/** How many bits of a 32-bit word are set (the usual SWAR count: no loop over the bits). */
export function bitsIn(word: number): number {
  let x = word - ((word >>> 1) & 0x55555555);
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}
