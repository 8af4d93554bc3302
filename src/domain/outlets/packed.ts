// Arrays that the search's compiled code reads are made here, pushed onto a literal, not by
// `Array.prototype.map`. An array from map() has one elements kind (V8's record of what an array
// holds and whether it has holes) while the function calling map() runs unoptimised and another
// once V8 has optimised it; code compiled for one kind is thrown away when the other arrives. At
// 1M outlets that undid the matching code of every search at once (OutletQuery, bits,
// listMatches, tiersOf), seconds after the warm-up had compiled it (issue 56). A literal that is
// pushed onto always holds the same kind.

/** `xs.map(f)`, always as a packed array of elements. */
export function packedMap<T, U>(xs: readonly T[], f: (x: T, i: number) => U): U[] {
  const out: U[] = [];
  for (let i = 0; i < xs.length; i++) out.push(f(xs[i]!, i));
  return out;
}
