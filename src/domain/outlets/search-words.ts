import type { SearchFilter } from './search-filter.js';
import type { OutletFigures, SearchIndex } from './search-index.js';
import { bits } from './search-query.js';
import { hasSlot, slotsOf } from './slot-bits.js';

// The campaign planner's question to the search index (planning/candidates.ts): which outlets
// passing a filter match any of several words (each a set of lexemes, OR-ed, not AND-ed as a
// search's words are), where each word matched them, and their figures for a pre-rank. The same
// filters and lexemes as outlet search; the planner sees outlets, never the index's bitsets.

/** Where a word matched an outlet, best first: its name or domain, its topics, anywhere else. */
export type WordPlace = 'name' | 'topics' | 'description';

/** An outlet a word matched (or, for the fallback, one passing the filter). */
export interface FoundOutlet {
  figures: OutletFigures;
  /** Its place in the index (read back by the query that found it). */
  readonly slot: number;
}

export class WordsQuery {
  private readonly passing: Uint32Array;
  private readonly perWord: { name: Uint32Array; topics: Uint32Array; anywhere: Uint32Array }[];
  private topical: Uint32Array | undefined;

  /** `words`: each word's lexemes. */
  constructor(
    private readonly index: SearchIndex,
    filter: SearchFilter,
    words: readonly (readonly string[])[],
  ) {
    // The bitsets of a browse with the filter; the matches are kept, the rest go back.
    const browse = bits(index, undefined, filter);
    this.passing = browse.keep();
    this.perWord = words.map((lexemes) => this.lexemeBits(lexemes));
  }

  /** The slots having any of the lexemes: in the name or domain, in the topics, anywhere. */
  private lexemeBits(lexemes: readonly string[]): { name: Uint32Array; topics: Uint32Array; anywhere: Uint32Array } {
    const ix = this.index;
    const n = (ix.slotCount + 31) >>> 5;
    const out = { name: new Uint32Array(n), topics: new Uint32Array(n), anywhere: new Uint32Array(n) };
    for (const l of lexemes) {
      const id = ix.lexicon.id(l);
      if (id === undefined) continue;
      ix.nameTerms.setBits(out.name, id);
      ix.topicTerms.setBits(out.topics, id);
      ix.terms.setBits(out.anywhere, id);
    }
    return out;
  }

  /** The outlets passing the filter that any word matches, anywhere. */
  matching(): FoundOutlet[] {
    const matching = new Uint32Array(this.passing.length);
    for (const bits of this.perWord) for (let i = 0; i < matching.length; i++) matching[i]! |= bits.anywhere[i]! & this.passing[i]!;
    return slotsOf(matching).map((slot) => ({ slot, figures: this.index.figures(slot) }));
  }

  /** The `n` outlets passing the filter with most traffic, most first. */
  mostTraffic(n: number): FoundOutlet[] {
    return this.index.byTraffic.firstIn(this.passing, n, false).slots.map((slot) => ({ slot, figures: this.index.figures(slot) }));
  }

  /** Whether the outlet has one of these topics (as slugs); the topics are read at the first call. */
  inTopics(outlet: FoundOutlet, slugs: () => readonly string[]): boolean {
    this.topical ??= this.topicBits(slugs());
    return hasSlot(this.topical, outlet.slot);
  }

  /** The slots whose topics (as slugs) include any of these. */
  private topicBits(slugs: readonly string[]): Uint32Array {
    const bits = new Uint32Array((this.index.slotCount + 31) >>> 5);
    for (const t of slugs) {
      const code = this.index.topicCode(t);
      if (code !== undefined) this.index.topics.setBits(bits, code);
    }
    return bits;
  }

  /** Where the word (its place in `words`) matched the outlet; undefined: it did not. */
  placeOf(outlet: FoundOutlet, word: number): WordPlace | undefined {
    const b = this.perWord[word]!;
    const s = outlet.slot;
    return hasSlot(b.name, s) ? 'name' : hasSlot(b.topics, s) ? 'topics' : hasSlot(b.anywhere, s) ? 'description' : undefined;
  }
}
