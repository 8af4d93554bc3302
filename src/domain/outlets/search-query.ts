import type { OutletSort } from './enums.js';
import { type Bound, narrowings, type SearchFilter, within } from './search-filter.js';
import { BitSlots } from './search-bits.js';
import { bitsIn } from './slot-bits.js';
import { domainKey, nameKey, orderFormat, PRICE_INDEX, type SearchIndex, type TextQuery } from './search-index.js';
import { listMatches } from './search-listed.js';
import type { SlotLists } from './search-postings.js';
import { figured, having, rank, type RankingRule } from './search-rules.js';
import { ANYWHERE, EXACT, IN_NAME, type Ordering, type SlotSet } from './search-sets.js';

// One search over the index (search-index.ts): its words and filter matched into one set of slots
// (search-sets.ts), either way (the listed way when the rarest word is rare, else bitsets over
// every slot), then counted, narrowed by a phrase check, and ranked into a page. Nothing here
// depends on the way the matches were found.

export class OutletQuery {
  private readonly matches: SlotSet;

  /** The outlets matching the words (or the exact name or domain; every outlet without words) and the filter. */
  constructor(
    private readonly index: SearchIndex,
    q: TextQuery | undefined,
    private readonly filter: SearchFilter,
  ) {
    this.matches = (q && listed(index, q, filter)) || bits(index, q, filter);
  }

  /** Which way the matches were found. */
  get kind(): 'bits' | 'slots' {
    return this.matches.kind;
  }

  /** How many outlets it matches (meta.total). */
  total(): number {
    return this.matches.size();
  }

  /** The ids of the first `n` matches in the sort's order (`text`: the search has words). */
  page(sort: OutletSort, text: boolean, n: number): number[] {
    const { rules, ordering } = rulesOf(this.index, sort, this.filter, text);
    return rank(this.matches, rules, ordering, n).map((s) => this.index.idOf(s));
  }

  /** The outlet ids a phrase is confirmed on: the matches other than the exact name or domain. */
  phraseCandidates(): number[] {
    return this.matches.slotsOutside(EXACT).map((s) => this.index.idOf(s));
  }

  /**
   * Keeps the matches whose rows have every phrase (`anywhere`: outlet ids), or the exact name or
   * domain; the name tier keeps those with every phrase in the name (`inName`).
   */
  confirm(anywhere: Iterable<number>, inName: Iterable<number>): void {
    const any = this.index.slotsOfIds(anywhere);
    const name = this.index.slotsOfIds(inName);
    this.matches.narrowTier(IN_NAME, name);
    this.matches.narrowTier(ANYWHERE, any);
    this.matches.keepIn(EXACT, any);
    this.index.lender.give(any, name);
  }

  /** Gives back what the matches borrowed from the index (nothing may read them after). */
  release(): void {
    this.matches.release();
  }
}

/**
 * The ranking rules of a sort, and the order they end in: relevance ranks the exact name or
 * domain first, then every word in the name or domain, then every word anywhere, each by traffic;
 * the rated sorts put the outlets with the figure first, in its order; the others are one order.
 */
function rulesOf(index: SearchIndex, sort: OutletSort, f: SearchFilter, text: boolean): { rules: RankingRule[]; ordering: Ordering } {
  const traffic = { order: index.byTraffic, reverse: false };
  switch (sort) {
    case 'relevance':
      return { rules: text ? [having(EXACT), having(IN_NAME), having(ANYWHERE)] : [], ordering: traffic };
    case '-traffic':
      return { rules: [], ordering: traffic };
    case 'traffic':
      return { rules: [], ordering: { order: index.byTraffic, reverse: true } };
    case 'price':
    case '-price':
      // A price bound (on the format the order reads, or on any format when none is asked) puts
      // every match at or below it in the order: the walk skips the dearer outlets.
      return {
        rules: [],
        ordering: { order: index.byPrice[PRICE_INDEX[orderFormat(f)]]!, reverse: sort === '-price', upTo: (f.formats?.length ?? 0) <= 1 ? f.maxPriceCents : undefined },
      };
    case 'link_survival':
      return { rules: [figured(index.bitsOf('survival'), { order: index.bySurvival, reverse: false })], ordering: traffic };
    case 'verification':
      return { rules: [figured(index.bitsOf('verification'), { order: index.byVerification, reverse: false })], ordering: traffic };
  }
}

/**
 * The listed way (undefined when the candidates are too many for it): the slots of the word
 * whose lexemes hold fewest (in search_vector or name_vector), with the exact name or domain,
 * each tested for being alive, the filters and, per word, its lexemes' slot runs (a binary
 * search each). The same matches and tiers as the bitsets give.
 */
function listed(index: SearchIndex, q: TextQuery, f: SearchFilter): SlotSet | undefined {
  const groups = q.groups.map((g) => {
    const ids = lexemeIds(index, g);
    const of = (lists: SlotLists) => ids.map((id) => ({ runs: lists.runs(id), bits: lists.bitsOf(id) }));
    return { terms: of(index.terms), name: of(index.nameTerms) };
  });
  const exact = [nameKey(q.exactName), ...(q.domain === undefined ? [] : [domainKey(q.domain)])].map((k) => ({ runs: index.exacts.runs(k), bits: undefined }));
  return listMatches({ groups, exact }, index.slotCount, index.bitsOf('alive'), () => narrowings(f, index), () => index.places());
}

/**
 * The words' matches as a bitset over slots: each group through any of its lexemes. A broad
 * lexeme's own bitset is copied in rather than OR-ed into zeros, and a later group of one broad
 * lexeme is AND-ed straight from its bitset: a pass over every slot or two fewer per word.
 */
function matchBits(index: SearchIndex, groups: TextQuery['groups'], terms: SlotLists): Uint32Array {
  const n = (index.slotCount + 31) >>> 5;
  const lender = index.lender;
  const words = lender.takeAny(n);
  anyOf(words, groups.length ? lexemeIds(index, groups[0]!) : [], terms);
  for (const g of groups.slice(1)) {
    const ids = lexemeIds(index, g);
    const broad = ids.length === 1 ? terms.bitsOf(ids[0]!) : undefined;
    const bits = broad ?? anyOf(lender.takeAny(n), ids, terms);
    andWith(words, bits);
    if (!broad) lender.give(bits);
  }
  return words;
}

/** The ids of a word group's lexemes that the index knows. */
function lexemeIds(index: SearchIndex, g: TextQuery['groups'][number]): number[] {
  return g.lexemes.map((l) => index.lexicon.id(l)).filter((id) => id !== undefined);
}

/** Writes into `bits` (whole) the slots of any of the lexemes: the first broad one's bitset copied, the others' slots set. */
function anyOf(bits: Uint32Array, ids: number[], terms: SlotLists): Uint32Array {
  const at = ids.findIndex((id) => terms.bitsOf(id) !== undefined);
  if (at < 0) bits.fill(0);
  else {
    const broad = terms.bitsOf(ids[at]!)!;
    bits.set(broad.length > bits.length ? broad.subarray(0, bits.length) : broad);
    bits.fill(0, broad.length);
  }
  ids.forEach((id, i) => i !== at && terms.setBits(bits, id));
  return bits;
}

/** The bitsets' way: every word's slots, the tiers and the filters as bitsets over every slot. */
export function bits(index: SearchIndex, q: TextQuery | undefined, f: SearchFilter): BitSlots {
  const n = (index.slotCount + 31) >>> 5;
  const lender = index.lender;
  const anywhere = q ? matchBits(index, q.groups, index.terms) : lender.takeAny(n).fill(0xffffffff);
  const inName = q && q.groups.length ? matchBits(index, q.groups, index.nameTerms) : lender.take(n);
  const exact = lender.take(n);
  let exactSlots = 0;
  if (q) {
    for (const key of [nameKey(q.exactName), ...(q.domain === undefined ? [] : [domainKey(q.domain)])]) {
      index.exacts.setBits(exact, key);
      for (const run of index.exacts.runs(key)) exactSlots += run.length;
    }
  }
  // Every word of it is written below.
  const universe = lender.takeAny(n);
  const alive = index.bitsOf('alive');
  const all = narrowings(f, index);
  // The filters of one value each (most: a country, a topic, having an offer) are ANDed in the
  // same pass as the words; those of several values (OR-ed first) in a pass each.
  const single: Uint32Array[] = [];
  const several: Uint32Array[][] = [];
  for (const nw of all) {
    if (!('anyOf' in nw)) {
      // A price bound's nearest step above it: a filter of one value like the others.
      if (nw.bound.among) single.push(nw.bound.among);
      continue;
    }
    const sets = nw.anyOf.filter((b): b is Uint32Array => b !== undefined);
    if (sets.length === 1) single.push(sets[0]!);
    // None (a value no outlet has: nothing passes), or several.
    else several.push(sets);
  }
  // Fewer than two: `alive` again, which changes nothing.
  while (single.length < 2) single.push(alive);
  // Counted in the same pass: the count (meta.total) holds unless a pass below narrows the matches.
  const count = combine(universe, anywhere, exact, inName, alive, single[0]!, single[1]!);
  // A bound on a price step itself ($50, $100…) is decided by its bitset alone.
  const bounds = all.flatMap((nw) => ('bound' in nw && !(nw.bound.among && nw.bound.among === nw.bound.sure) ? [nw.bound] : []));
  for (const set of single.slice(2)) andWith(universe, set);
  for (const sets of several) andWithAnyOf(universe, sets);
  for (const bound of bounds) keepWithin(universe, bound);
  const narrowedAfter = single.length > 2 || several.length > 0 || bounds.length > 0;
  return new BitSlots(universe, { exact, inName, anywhere, noExact: exactSlots === 0 }, lender, [universe, exact, inName, anywhere], narrowedAfter ? -1 : count);
}

// The passes over every slot's word are functions of their own, not loops inside bits(): V8
// compiles a long loop met in the middle of a function on its own (on-stack replacement), knowing
// nothing yet of the code after it, and that code then fell back to the interpreter at its first
// line on every search until bits() as a whole was compiled (issue 56: 214 such fallbacks in the
// first 300 searches after ready at 1M outlets).

/** universe = (anywhere | exact | inName) & alive & a & b; returns how many slots it holds. */
function combine(universe: Uint32Array, anywhere: Uint32Array, exact: Uint32Array, inName: Uint32Array, alive: Uint32Array, a: Uint32Array, b: Uint32Array): number {
  let count = 0;
  for (let i = 0; i < universe.length; i++) {
    const x = (anywhere[i]! | exact[i]! | inName[i]!) & alive[i]! & a[i]! & b[i]!;
    universe[i] = x;
    if (x !== 0) count += bitsIn(x);
  }
  return count;
}

/** bits &= set, over the words both have; the rest of `bits` cleared. */
function andWith(bits: Uint32Array, set: Uint32Array): void {
  const common = Math.min(bits.length, set.length);
  for (let i = 0; i < common; i++) bits[i]! &= set[i]!;
  bits.fill(0, common);
}

/** universe &= (any of sets). */
function andWithAnyOf(universe: Uint32Array, sets: Uint32Array[]): void {
  for (let i = 0; i < universe.length; i++) {
    if (universe[i] === 0) continue;
    let any = 0;
    for (const set of sets) any |= set[i]!;
    universe[i]! &= any;
  }
}

/**
 * Clears the matches outside the bound, each remaining match tested (only searches with a bound pay
 * for it) but those in its `sure` step; a bound on one figure (one price, the traffic) is read in
 * the loop itself.
 */
function keepWithin(universe: Uint32Array, bound: Bound): void {
  const { figures, atLeast, atMost, sure } = bound;
  const one = figures.length === 1 ? figures[0]! : undefined;
  for (let w = 0; w < universe.length; w++) {
    let bits = sure === undefined ? universe[w]! : universe[w]! & ~sure[w]!;
    while (bits !== 0) {
      const low = bits & -bits;
      bits ^= low;
      const s = (w << 5) + (31 - Math.clz32(low));
      const passes = one ? one[s]! >= atLeast && one[s]! <= atMost : within(bound, s);
      if (!passes) universe[w]! &= ~low;
    }
  }
}
