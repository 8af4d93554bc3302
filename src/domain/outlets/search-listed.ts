import type { Narrowing } from './search-filter.js';
import { runHas } from './search-postings.js';
import { hasSlot } from './slot-bits.js';

// The listed way of matching a search (search-index.ts takes it when the query's rarest word is
// rare): instead of bitsets over every slot, the candidates are that word's slots (and those of
// the exact name or domain), each tested for being alive and against the filters, then marked by
// the other words' slot runs. It finds the same matches and relevance tiers as the bitsets; only
// what it costs differs (with the candidates, not with the catalog).

/** The relevance tiers of a listed slot, as bits. */
export const EXACT = 1;
export const IN_NAME = 2;
export const ANYWHERE = 4;

/** A search's matches as a list of slots. */
export interface Listed {
  kind: 'slots';
  /** The matching slots (filters applied), in no particular order. */
  slots: number[];
  /** Per slot (same position): EXACT | IN_NAME | ANYWHERE. */
  tiers: Uint8Array;
}

/** The slot runs (ascending) of what a search's words may match. */
export interface ListedSources {
  /** Per word: its lexemes' runs in search_vector and in name_vector. */
  groups: { terms: Int32Array[]; name: Int32Array[] }[];
  /** The runs of the exact name and of the domain. */
  exact: Int32Array[];
}

/**
 * A search takes the listed way when its candidates (the slots of its rarest word, and the exact
 * name or domain) are at most this share of the slots. Measured (bench/search/cost.ts), a
 * candidate costs about what the bitsets' way spends on 30–50 slots (a dozen passes over every
 * slot's bit), so below this share the list is the cheaper way and above it the bitsets.
 */
const LISTED_SHARE = 1 / 32;

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
): Listed | undefined {
  const count = (runs: Int32Array[]) => runs.reduce((n, r) => n + r.length, 0);
  let driver: Int32Array[] = [];
  let fewest = Infinity;
  for (const g of groups) {
    const n = count(g.terms) + count(g.name);
    if (n < fewest) [driver, fewest] = [[...g.terms, ...g.name], n];
  }
  const sources = [...exact, ...driver];
  if (count(sources) > size * LISTED_SHARE) return undefined;
  // Filters of values are bit tests (all of one filter's sets: any of them), made first; bounds
  // are tests, made last, on the slots the words match.
  const sets: Uint32Array[][] = [];
  const bounds: ((s: number) => boolean)[] = [];
  for (const nw of narrowings()) {
    if ('test' in nw) bounds.push(nw.test);
    else sets.push(nw.anyOf.filter((b): b is Uint32Array => b !== undefined));
  }
  // Each candidate once (a slot is in several runs): its place + 1 in `place`, or -1 when a
  // filter turned it away; every slot set is cleared again below.
  const place = places();
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
  // Each word's runs marked on the candidates, run by run (the last word's completions are
  // twenty runs, most of a few slots): a run's slots looked up in `place`, or for a run much
  // longer than the candidates, each candidate looked up in the run.
  const c = candidates.length;
  const markRun = (run: Int32Array, marks: Uint8Array, bit: number) => {
    if (run.length <= c * 16) {
      for (let i = 0; i < run.length; i++) {
        const at = place[run[i]!]!;
        if (at > 0) marks[at - 1]! |= bit;
      }
    } else for (let i = 0; i < c; i++) if (runHas(run, candidates[i]!)) marks[i]! |= bit;
  };
  const tier = new Uint8Array(c);
  if (groups.length) {
    tier.fill(IN_NAME | ANYWHERE);
    const hit = new Uint8Array(c);
    for (const g of groups) {
      hit.fill(0);
      for (const run of g.terms) markRun(run, hit, ANYWHERE);
      for (const run of g.name) markRun(run, hit, IN_NAME);
      for (let i = 0; i < c; i++) tier[i]! &= hit[i]!;
    }
  }
  for (const run of exact) markRun(run, tier, EXACT);
  for (const s of candidates) place[s] = 0;
  for (const s of refused) place[s] = 0;
  const slots: number[] = [];
  const tiers: number[] = [];
  next: for (let i = 0; i < c; i++) {
    const s = candidates[i]!;
    if (tier[i] === 0) continue;
    for (const test of bounds) if (!test(s)) continue next;
    slots.push(s);
    tiers.push(tier[i]!);
  }
  return { kind: 'slots', slots, tiers: Uint8Array.from(tiers) };
}

/** Whether any of the bitsets has the slot. */
function anyOfHas(sets: Uint32Array[], s: number): boolean {
  for (const b of sets) if (hasSlot(b, s)) return true;
  return false;
}
