import { describe, expect, it } from 'vitest';
import { Scratch } from '../../../src/domain/outlets/search-scratch.js';

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

  it('keeps at most 32', () => {
    const scratch = new Scratch();
    const lent = Array.from({ length: 40 }, () => scratch.take(2));
    scratch.give(...lent);
    const again = new Set(Array.from({ length: 40 }, () => scratch.take(2)));
    expect(lent.filter((b) => again.has(b))).toHaveLength(32);
  });
});
