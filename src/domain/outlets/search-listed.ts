import { type Bound, type Narrowing, within } from './search-filter.js';
import { runHas } from './search-postings.js';
import { ANYWHERE, EXACT, IN_NAME, type Ordering, type Part, type SlotSet, type Tier } from './search-sets.js';
import { hasSlot } from './slot-bits.js';

// The listed way of matching a search (search-query.ts takes it when the query's rarest word is
// rare): instead of bitsets over every slot, the candidates are that word's slots (and those of
// the exact name or domain), each tested for being alive and against the filters, then marked by
// the other words' slot runs. It finds the same matches and relevance tiers as the bitsets; only
// what it costs differs (with the candidates, not with the catalog).

/** A search's matches (or a bucket of them) as a list of slots, each with its relevance tiers. */
export class ListedSlots implements SlotSet {
  readonly kind = 'slots';

  /**
   * `slots`: the matching slots (filters applied), in no particular order; `tiers`, per slot (same
   * position): EXACT | IN_NAME | ANYWHERE. `places`: a bucket's places in those lists (none: all).
   */
  constructor(
    private slots: number[],
    private tiers: Uint8Array,
    private readonly places?: number[],
  ) {}

  size(): number {
    return this.places ? this.places.length : this.slots.length;
  }

  /** Whether the slot at this place is in `part`. */
  private has(part: Part, at: number): boolean {
    return typeof part === 'number' ? (this.tiers[at]! & part) !== 0 : hasSlot(part, this.slots[at]!);
  }

  split(part: Part): [ListedSlots, ListedSlots] {
    // Buckets hold places in `slots`, so that a tier is read where the slot is.
    const inside: number[] = [];
    const outside: number[] = [];
    for (const at of this.places ?? this.slots.keys()) (this.has(part, at) ? inside : outside).push(at);
    return [new ListedSlots(this.slots, this.tiers, inside), new ListedSlots(this.slots, this.tiers, outside)];
  }

  first(m: number, ordering: Ordering): number[] {
    return bestOf(this.places ? this.places.map((at) => this.slots[at]!) : this.slots, m, ordering);
  }

  slotsOutside(part: Part): number[] {
    const out: number[] = [];
    for (const at of this.places ?? this.slots.keys()) if (!this.has(part, at)) out.push(this.slots[at]!);
    return out;
  }

  narrowTier(tier: Tier, keep: Uint32Array): void {
    for (const at of this.places ?? this.slots.keys()) if (!hasSlot(keep, this.slots[at]!)) this.tiers[at]! &= ~tier;
  }

  keepIn(a: Part, b: Part): void {
    if (this.places) throw new Error('a bucket is not narrowed: the matches are');
    const slots: number[] = [];
    const tiers: number[] = [];
    this.slots.forEach((s, at) => {
      if (!this.has(a, at) && !this.has(b, at)) return;
      slots.push(s);
      tiers.push(this.tiers[at]!);
    });
    this.slots = slots;
    this.tiers = Uint8Array.from(tiers);
  }

  release(): void {}
}

/** One lexeme's (or name's, domain's) slots: ascending runs, and for a broad one also a bitset. */
export interface Posting {
  runs: Int32Array[];
  bits: Uint32Array | undefined;
}

/** What a search's words may match. */
export interface ListedSources {
  /** Per word: its lexemes' slots in search_vector and in name_vector. */
  groups: { terms: Posting[]; name: Posting[] }[];
  /** The exact name's and the domain's. */
  exact: Posting[];
}

/**
 * A search takes the listed way when its candidates (the slots of its rarest word, and the exact
 * name or domain) are at most this share of the slots. Measured at 1M outlets
 * (bench/RESULTS.md), a candidate costs about what the bitsets' way spends on 60–80 slots (a dozen
 * passes over every slot's bit): at one in 64 the listed searches took about half the CPU the
 * bitsets take for them; at one in 32 they took more.
 */
const LISTED_SHARE = 1 / 64;

/**
 * The matches, or undefined when the candidates are too many for this way. `places` is a
 * slot-indexed scratch array, all zero, left all zero.
 */
export function listMatches(
  { groups, exact }: ListedSources,
  size: number,
  alive: Uint32Array,
  narrowings: () => Narrowing[],
  places: () => Int32Array,
): ListedSlots | undefined {
  const count = (ps: Posting[]) => ps.reduce((n, p) => n + p.runs.reduce((m, r) => m + r.length, 0), 0);
  let driver: Posting[] = [];
  let fewest = Infinity;
  for (const g of groups) {
    const n = count(g.terms) + count(g.name);
    if (n < fewest) [driver, fewest] = [[...g.terms, ...g.name], n];
  }
  if (count(exact) + fewest > size * LISTED_SHARE) return undefined;
  const sources = [...exact, ...driver].flatMap((p) => p.runs);
  // Filters of values are bit tests (all of one filter's sets: any of them), made first; bounds
  // are tests, made last, on the slots the words match.
  const sets: Uint32Array[][] = [];
  const bounds: Bound[] = [];
  for (const nw of narrowings()) {
    if ('bound' in nw) bounds.push(nw.bound);
    else sets.push(nw.anyOf.filter((b): b is Uint32Array => b !== undefined));
  }
  const place = places();
  const { candidates, refused } = candidatesOf(sources, alive, sets, place);
  const tier = tiersOf(groups, exact, candidates, place);
  for (const s of candidates) place[s] = 0;
  for (const s of refused) place[s] = 0;
  return keptWithin(candidates, tier, bounds);
}

// The phases of listMatches are functions of their own, each with its one loop: V8 compiles a
// long loop met in the middle of a function on its own (on-stack replacement), knowing nothing
// yet of the code after it, which then fell back to the interpreter on many searches until the
// whole function was compiled, and the function was compiled again and again (issue 56: five
// times in the first 200 searches after ready at 1M outlets, 67–246 ms of compiling each).

/**
 * Each candidate once (a slot is in several runs), alive and passing every filter of values:
 * its place + 1 written in `place`, or -1 when turned away (`refused`, to be cleared with them).
 */
function candidatesOf(sources: Int32Array[], alive: Uint32Array, sets: Uint32Array[][], place: Int32Array): { candidates: number[]; refused: number[] } {
  const candidates: number[] = [];
  const refused: number[] = [];
  for (const run of sources) {
    next: for (let i = 0; i < run.length; i++) {
      const s = run[i]!;
      if (place[s] !== 0) continue;
      if (hasSlot(alive, s)) {
        let pass = true;
        for (const anyOf of sets) if (!anyOfHas(anyOf, s)) pass = false;
        if (pass) {
          place[s] = candidates.push(s);
          continue next;
        }
      }
      place[s] = -1;
      refused.push(s);
    }
  }
  return { candidates, refused };
}

/**
 * Per candidate, its tiers: every word's slots marked on the candidates, lexeme by lexeme (the
 * last word's completions are twenty lexemes, most of a few slots), then the exact name's.
 */
function tiersOf(groups: ListedSources['groups'], exact: Posting[], candidates: number[], place: Int32Array): Uint8Array {
  const c = candidates.length;
  const tier = new Uint8Array(c);
  if (groups.length) {
    tier.fill(IN_NAME | ANYWHERE);
    const hit = new Uint8Array(c);
    for (const g of groups) {
      hit.fill(0);
      for (const p of g.terms) markPosting(p, hit, ANYWHERE, candidates, place);
      for (const p of g.name) markPosting(p, hit, IN_NAME, candidates, place);
      for (let i = 0; i < c; i++) tier[i]! &= hit[i]!;
    }
  }
  for (const p of exact) markPosting(p, tier, EXACT, candidates, place);
  return tier;
}

/** Marks `bit` on the candidates in the lexeme's slots (the bitset holds all of them, those added since the load too). */
function markPosting({ runs, bits }: Posting, marks: Uint8Array, bit: number, candidates: number[], place: Int32Array): void {
  if (bits) {
    for (let i = 0; i < candidates.length; i++) if (hasSlot(bits, candidates[i]!)) marks[i]! |= bit;
  } else for (const run of runs) markRun(run, marks, bit, candidates, place);
}

/**
 * Marks `bit` on the candidates in the run: a short run's slots looked up in `place`; for a run
 * with many more slots than there are candidates, each candidate searched in it.
 */
function markRun(run: Int32Array, marks: Uint8Array, bit: number, candidates: number[], place: Int32Array): void {
  const c = candidates.length;
  if (run.length <= c * 16) {
    for (let i = 0; i < run.length; i++) {
      const at = place[run[i]!]!;
      if (at > 0) marks[at - 1]! |= bit;
    }
  } else for (let i = 0; i < c; i++) if (runHas(run, candidates[i]!)) marks[i]! |= bit;
}

/** The candidates in some tier and within every bound, with their tiers. */
function keptWithin(candidates: number[], tier: Uint8Array, bounds: Bound[]): ListedSlots {
  const slots: number[] = [];
  const tiers: number[] = [];
  next: for (let i = 0; i < candidates.length; i++) {
    const s = candidates[i]!;
    if (tier[i] === 0) continue;
    for (const b of bounds) if (!within(b, s)) continue next;
    slots.push(s);
    tiers.push(tier[i]!);
  }
  return new ListedSlots(slots, Uint8Array.from(tiers));
}

/** Whether any of the bitsets has the slot. */
function anyOfHas(sets: Uint32Array[], s: number): boolean {
  for (const b of sets) if (hasSlot(b, s)) return true;
  return false;
}

/** The first `m` of the slots in the ordering: a sorted buffer of the best seen, most slots rejected by one comparison. */
function bestOf(slots: readonly number[], m: number, { order, reverse }: Ordering): number[] {
  const cmp = reverse ? (a: number, b: number) => order.before(b, a) : order.before;
  const best: number[] = [];
  if (m <= 0) return best;
  for (const s of slots) {
    if (best.length === m && cmp(s, best[m - 1]!) >= 0) continue;
    let lo = 0;
    let hi = best.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cmp(best[mid]!, s) < 0) lo = mid + 1;
      else hi = mid;
    }
    best.splice(lo, 0, s);
    if (best.length > m) best.pop();
  }
  return best;
}
