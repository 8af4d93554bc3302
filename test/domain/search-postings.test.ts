import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/domain/outlets/generator.js';
import { SlotLists } from '../../src/domain/outlets/search-postings.js';

// The slots of each key, packed at load and added to since: every key gives back exactly its
// slots, before and after packing, and after packing again.

const slotsOf = (lists: SlotLists, key: number, size: number) => {
  const bits = new Uint32Array((size + 31) >>> 5);
  lists.setBits(bits, key);
  return Array.from({ length: size }, (_, s) => s).filter((s) => (bits[s >>> 5]! & (1 << (s & 31))) !== 0);
};

describe('SlotLists', () => {
  it('keeps every key’s slots across packs', () => {
    const rnd = mulberry32(5);
    const lists = new SlotLists();
    const expected = new Map<number, number[]>();
    const size = 5_000;
    const add = (from: number, to: number) => {
      for (let s = from; s < to; s++) {
        // Mostly keys of one slot (as domain labels), some shared by many, hashes as large as 2^53.
        const keys = [Math.floor(rnd() * 2 ** 53), Math.floor(rnd() * 20), Math.floor(rnd() * 2_000)];
        for (const k of keys) {
          lists.add(k, s);
          expected.set(k, [...(expected.get(k) ?? []), s]);
        }
      }
    };
    const check = () => {
      for (const [k, slots] of expected) expect(slotsOf(lists, k, size)).toEqual([...new Set(slots)].sort((a, b) => a - b));
      expect(lists.has(2 ** 53 + 2)).toBe(false);
      expect(slotsOf(lists, -1, size)).toEqual([]);
    };
    add(0, 3_000);
    check();
    lists.pack();
    check();
    add(3_000, 4_000);
    check();
    lists.pack();
    add(4_000, size);
    check();
    for (const k of expected.keys()) expect(lists.has(k)).toBe(true);
  });
});
