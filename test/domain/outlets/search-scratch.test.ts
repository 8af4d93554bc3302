import { describe, expect, it } from 'vitest';
import { Scratch } from '../../../src/domain/outlets/search-scratch.js';
import { bitsIn } from '../../../src/domain/outlets/slot-bits.js';

// The bitsets lent to searches: a bitset given back is lent again, zeroed; one of a size the
// index no longer has is dropped; at most a few searches' worth are kept.

describe('Scratch', () => {
  it('lends a bitset given back again, zeroed', () => {
    const scratch = new Scratch();
    const a = scratch.take(4);
    a.fill(0xffffffff);
    scratch.give(a);
    const b = scratch.take(4);
    expect(b).toBe(a);
    expect([...b]).toEqual([0, 0, 0, 0]);
  });

  it('never lends one bitset twice, and drops the sizes the index outgrew', () => {
    const scratch = new Scratch();
    const a = scratch.take(4);
    const b = scratch.take(4);
    expect(b).not.toBe(a);
    scratch.give(a, b);
    const wider = scratch.take(5);
    expect(wider.length).toBe(5);
    expect(wider).not.toBe(a);
    expect(wider).not.toBe(b);
    // Both 4-word bitsets were passed over for the 5-word one, and dropped.
    expect(scratch.take(4)).not.toBe(a);
  });

  it('lends one to overwrite as it was given back (takeAny), a new one zeroed', () => {
    const scratch = new Scratch();
    expect([...scratch.takeAny(3)]).toEqual([0, 0, 0]);
    const a = scratch.take(3);
    a.fill(7);
    scratch.give(a);
    const b = scratch.takeAny(3);
    expect(b).toBe(a);
    expect([...b]).toEqual([7, 7, 7]);
  });

  it('counts the bits of a word as a loop over them does', () => {
    const slow = (w: number) => {
      let n = 0;
      for (let i = 0; i < 32; i++) if ((w >>> i) & 1) n++;
      return n;
    };
    const words = [0, 1, 0x80000000, 0xffffffff, 0x55555555, 0xaaaaaaaa, 0x0f0f0f0f, 0x12345678, 0xdeadbeef, -1, -2147483648];
    for (let i = 0; i < 1000; i++) words.push((Math.random() * 2 ** 32) >>> 0, (Math.random() * 2 ** 32) | 0);
    for (const w of words) expect(bitsIn(w), `0x${(w >>> 0).toString(16)}`).toBe(slow(w));
  });

  it('keeps at most 32', () => {
    const scratch = new Scratch();
    const lent = Array.from({ length: 40 }, () => scratch.take(2));
    scratch.give(...lent);
    const again = new Set(Array.from({ length: 40 }, () => scratch.take(2)));
    expect(lent.filter((b) => again.has(b))).toHaveLength(32);
  });
});
