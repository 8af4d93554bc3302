import { describe, expect, it } from 'vitest';
import { packedMap } from '../../../src/domain/outlets/packed.js';

describe('packedMap', () => {
  it('maps in order with each index, as map() does; an empty list gives an empty one', () => {
    const xs = ['a', 'b', 'c'];
    expect(packedMap(xs, (x, i) => `${x}${i}`)).toEqual(xs.map((x, i) => `${x}${i}`));
    expect(packedMap([], (x: number) => x)).toEqual([]);
    // A new array each time, never the input.
    expect(packedMap(xs, (x) => x)).not.toBe(xs);
  });
});
