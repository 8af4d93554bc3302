import type { Ordering, Part, SlotSet } from './search-sets.js';

// Ranking as rules over one set of matches (search-sets.ts), the way Meilisearch's ranking rules
// work: each rule splits the bucket it is given into smaller buckets, best first; the next rule
// splits each of those in turn; the last bucket order is a slot order (traffic, price, a
// track-record figure) read until the page is full. Only the buckets the page reaches are split
// at all. Written once: the bitsets' way and the listed way are two kinds of the same set.

/**
 * A rule splits the bucket it is given in two: the slots in `first` (in `ordering` when the rule
 * decides their order, as a track-record figure does), then the rest.
 */
export interface RankingRule {
  first: Part;
  ordering?: Ordering;
}

/** Those in `first` first (a relevance tier: the exact name, every word in the name, …), then the rest. */
export const having = (first: Part): RankingRule => ({ first });

/** Those with a track-record figure (`bits`) first, in the figure's own order; then the rest. */
export const figured = (bits: Uint32Array, ordering: Ordering): RankingRule => ({ first: bits, ordering });

/** The first `m` slots of `universe` under the rules, then `ordering` (unless a rule's bucket set its own). */
export function rank(universe: SlotSet, rules: readonly RankingRule[], ordering: Ordering, m: number): number[] {
  const out: number[] = [];
  const visit = (bucket: SlotSet, rule: number, within: Ordering) => {
    const size = bucket.size();
    if (size === 0) return;
    if (rule === rules.length) {
      out.push(...bucket.first(Math.min(m - out.length, size), within));
      return;
    }
    const { first, ordering: own } = rules[rule]!;
    const [inside, outside] = bucket.split(first);
    visit(inside, rule + 1, own ?? within);
    if (out.length < m) visit(outside, rule + 1, within);
    inside.release();
    outside.release();
  };
  if (m > 0) visit(universe, 0, ordering);
  return out;
}
