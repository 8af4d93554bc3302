import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../../src/demo/outlet-generator.js';
import { SlotLists } from '../../../src/domain/outlets/search-postings.js';

// The slots of each key, packed at load and added to since: every key gives back exactly its
// slots once packed, with slots added since, and after packing again.

const slotsOf = (lists: SlotLists, key: number, size: number) => {
  const bits = new Uint32Array((size + 31) >>> 5);
  lists.setBits(bits, key);
  const slots: number[] = [];
  bits.forEach((word, w) => {
    for (let b = 0; b < 32; b++) if (word & (1 << b)) slots.push(w * 32 + b);
  });
  return slots;
};

describe('SlotLists', () => {
  // Small integer keys (lexeme ids) are packed through a table, hashes through a sort.
  it.each([false, true])('keeps every key’s slots across packs (hashes among the keys: %s)', (hashes) => {
    const rnd = mulberry32(5);
    const lists = new SlotLists();
    const expected = new Map<number, number[]>();
    const size = 2_000;
    const add = (from: number, to: number) => {
      for (let s = from; s < to; s++) {
        // Mostly keys of one slot (as domain labels), some shared by many, hashes as large as 2^53.
        const keys = [Math.floor(rnd() * (hashes ? 2 ** 53 : 1e6)), Math.floor(rnd() * 20), Math.floor(rnd() * 2_000)];
        for (const k of keys) {
          lists.add(k, s);
          expected.set(k, [...(expected.get(k) ?? []), s]);
        }
      }
    };
    const check = () => {
      const keys = [...expected.keys()];
      expect(keys.map((k) => slotsOf(lists, k, size))).toEqual(keys.map((k) => [...new Set(expected.get(k))].sort((a, b) => a - b)));
      expect(lists.has(2 ** 53 + 2)).toBe(false);
      expect(slotsOf(lists, -1, size)).toEqual([]);
    };
    // Read only once packed (the index answers nothing before its load ends).
    add(0, 1_200);
    lists.pack();
    check();
    add(1_200, 1_600);
    check();
    lists.pack();
    add(1_600, size);
    check();
    for (const k of expected.keys()) expect(lists.has(k)).toBe(true);
  });
});
