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
  it.each([false, true])('keeps every key’s slots across packs (hashes among the keys: %s)', async (hashes) => {
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
    await lists.packLoaded(() => Promise.resolve());
    check();
    add(1_200, 1_600);
    check();
    lists.pack();
    add(1_600, size);
    check();
    for (const k of expected.keys()) expect(lists.has(k)).toBe(true);
  });

  // Issue 56: at 1M outlets the load's pairs are tens of millions; packed in one piece they held
  // the event loop up for seconds (a reload's index in use and /healthz waited). The pack gives
  // the loop back between pieces, and packs the same lists.
  it.each([false, true])('packs a load of several chunks in pieces, the loop given back between them (hashes: %s)', async (hashes) => {
    const lists = new SlotLists();
    const size = 600_000;
    const key = (s: number, j: number) => (hashes ? 2 ** 40 + ((s * 7919 + j) % 50_000) * 1_000_003 : (s * 7 + j * 13) % 40_000);
    for (let s = 0; s < size; s++) for (let j = 0; j < 2; j++) lists.add(key(s, j), s);
    // A key shared by every slot: its bitset is made in the densify pass.
    for (let s = 0; s < size; s++) lists.add(hashes ? 3 : 40_001, s);
    let pauses = 0;
    await lists.packLoaded(async () => {
      pauses++;
    });
    expect(pauses).toBeGreaterThan(2);
    const all = slotsOf(lists, hashes ? 3 : 40_001, size);
    expect(all).toHaveLength(size);
    const k = key(12_345, 1);
    const expected: number[] = [];
    for (let s = 0; s < size; s++) for (let j = 0; j < 2; j++) if (key(s, j) === k) expected.push(s);
    expect(slotsOf(lists, k, size)).toEqual([...new Set(expected)]);
  });
});
