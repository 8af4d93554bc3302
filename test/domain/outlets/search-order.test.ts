import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../../src/demo/outlet-generator.js';
import { SlotOrder } from '../../../src/domain/outlets/search-order.js';

// The slot order a page is walked in: whatever has been added since the last merge (a sorted
// tail) or dropped (dead slots), the first slots found are those a full sort gives, both ways.

function setup(seed: number, slots: number, dead: Set<number>) {
  const rnd = mulberry32(seed);
  // Few distinct keys, so that ties (broken by slot here, as by id in the index) are common.
  const key = Array.from({ length: slots }, () => Math.floor(rnd() * 50));
  const before = (a: number, b: number) => key[b]! - key[a]! || b - a;
  return { rnd, order: new SlotOrder(before, (s) => !dead.has(s)), before };
}

function bitsOf(slots: number[], size: number): Uint32Array {
  const bits = new Uint32Array((size + 31) >>> 5);
  for (const s of slots) bits[s >>> 5]! |= 1 << (s & 31);
  return bits;
}

describe('SlotOrder', () => {
  for (const [name, loaded, added] of [
    ['all merged', 20_000, 0],
    ['a small tail, sorted apart', 20_000, 300],
    ['a large tail, merged', 2_000, 8_000],
  ] as const) {
    it(`${name}: the first matches in order, forwards and backwards`, () => {
      const size = loaded + added;
      const dead = new Set<number>();
      const { rnd, order, before } = setup(loaded + added, size, dead);
      for (let s = 0; s < loaded; s++) order.add(s);
      order.settle();
      for (let s = loaded; s < size; s++) order.add(s);
      // A tenth die (their bits are never set, as in the index).
      for (let s = 0; s < size; s++) if (rnd() < 0.1) dead.add(s);
      for (const share of [0.5, 0.01, 0.0005]) {
        const matches = Array.from({ length: size }, (_, s) => s).filter((s) => !dead.has(s) && rnd() < share);
        const bits = bitsOf(matches, size);
        const sorted = [...matches].sort(before);
        for (const m of [1, 15, 40]) {
          expect(order.firstIn(bits, m, false).slots).toEqual(sorted.slice(0, m));
          expect(order.firstIn(bits, m, true).slots).toEqual([...sorted].reverse().slice(0, m));
        }
      }
      // A dense match is found after few slots, whatever the order's length.
      const dense = bitsOf(Array.from({ length: size }, (_, s) => s).filter((s) => !dead.has(s) && s % 2 === 0), size);
      expect(order.firstIn(dense, 15, false).passed).toBeLessThan(100);
    });
  }

  it('walks only the slots at or below a bound on its figure, backwards as forwards', () => {
    // Ascending by a figure (as a price order is), the matches all at or below 10 of 50.
    const rnd = mulberry32(7);
    const figure = Array.from({ length: 20_300 }, () => Math.floor(rnd() * 50));
    const before = (a: number, b: number) => figure[a]! - figure[b]! || a - b;
    const order = new SlotOrder(before, () => true, (s) => figure[s]!);
    for (let s = 0; s < 20_000; s++) order.add(s);
    order.settle();
    for (let s = 20_000; s < 20_300; s++) order.add(s);
    const matches = figure.flatMap((f, s) => (f <= 10 && rnd() < 0.05 ? [s] : []));
    const sorted = [...matches].sort(before);
    const atOrBelow = figure.filter((f) => f <= 10).length;
    const found = order.firstIn(bitsOf(matches, figure.length), 15, true, 10);
    expect(found.slots).toEqual([...sorted].reverse().slice(0, 15));
    // Not the ~79% of slots above the bound first: at most those at or below it, and the tail.
    expect(found.passed).toBeLessThanOrEqual(atOrBelow + 300);
    expect(order.span(10)).toBeLessThanOrEqual(atOrBelow + 300);
    expect(order.firstIn(bitsOf(matches, figure.length), 15, false, 10).slots).toEqual(sorted.slice(0, 15));
  });
});
