import { LRUCache } from 'lru-cache';
import type { Lexicon } from './search-lexicon.js';
import type { SlotLists } from './search-postings.js';

// The catalog's words (the lexemes of search_vector that are words of letters) as the search index
// holds them for completing the last word of a query, and for the engine's warm-up and look-ahead:
// sorted as their strings at the load, those new since kept aside until they are many.

export class CatalogWords {
  /** Lexicon ids, sorted as their strings; those added since, in `newWords`. */
  private words = new Int32Array(0);
  private newWords: number[] = [];
  /** Bumped by every word new to the completions (`newWords`): completions remembered before are stale. */
  version = 0;
  /** Completions of a prefix, remembered until a new word comes. */
  private readonly cache = new LRUCache<string, { version: number; words: string[] }>({ max: 2_000 });

  /** `terms`: search_vector's posting lists (how many outlets use a word). */
  constructor(
    private readonly lexicon: Lexicon,
    private readonly terms: SlotLists,
  ) {}

  /** A word new to search_vector since the load. */
  added(id: number): void {
    this.newWords.push(id);
    this.version++;
  }

  /** At the load's end: every flagged lexeme (a word) of search_vector, sorted. */
  settle(): void {
    const lexicon = this.lexicon;
    const inTerms = new Uint8Array(lexicon.size);
    this.terms.forEachKey((id) => (inTerms[id] = 1));
    let n = 0;
    for (let id = 0; id < lexicon.size; id++) if (inTerms[id] === 1 && lexicon.flagged(id)) n++;
    const words = new Int32Array(n);
    n = 0;
    for (let id = 0; id < lexicon.size; id++) if (inTerms[id] === 1 && lexicon.flagged(id)) words[n++] = id;
    this.words = words.sort((a, b) => lexicon.compareIds(a, b));
  }

  /**
   * Words of the catalog to warm the search up with (search-warmup.ts): `count` words spread over
   * the vocabulary, from those of a single outlet to the broadest, most used first.
   */
  sample(count: number): string[] {
    const words = this.words;
    if (words.length === 0) return [];
    const step = Math.max(1, Math.floor(words.length / (count * 4)));
    const sized: { text: string; n: number }[] = [];
    for (let i = 0; i < words.length; i += step) {
      const id = words[i]!;
      let n = 0;
      for (const run of this.terms.runs(id)) n += run.length;
      sized.push({ text: this.lexicon.text(id), n: this.terms.bitsOf(id) ? Infinity : n });
    }
    sized.sort((a, b) => b.n - a.n);
    // Evenly over the ranks by use: the broadest words (bitsets), middling ones, rare ones (listed).
    const out: string[] = [];
    const every = Math.max(1, sized.length / count);
    for (let i = 0; i < sized.length && out.length < count; i += every) out.push(sized[Math.floor(i)]!.text);
    return out;
  }

  /** The catalog's `count` most used words (in most outlets first). */
  common(count: number): string[] {
    const sized: { id: number; n: number }[] = [];
    for (const id of this.words) {
      let n = 0;
      for (const run of this.terms.runs(id)) n += run.length;
      sized.push({ id, n });
    }
    sized.sort((a, b) => b.n - a.n);
    return sized.slice(0, count).map((w) => this.lexicon.text(w.id));
  }

  /** The `max` shortest words longer than `prefix` that start with it (then in string order). */
  complete(prefix: string, max: number): string[] {
    // A short prefix starts thousands of the catalog's words (names run together in domains).
    // Only a write that brings a new word changes them, so other writes keep what is remembered.
    const key = `${max}:${prefix}`;
    const hit = this.cache.get(key);
    if (hit?.version === this.version) return hit.words;
    const words = this.completeNow(prefix, max);
    this.cache.set(key, { version: this.version, words });
    return words;
  }

  private completeNow(prefix: string, max: number): string[] {
    const lexicon = this.lexicon;
    if (this.newWords.length > 1_024) {
      const merged = new Int32Array(this.words.length + this.newWords.length);
      merged.set(this.words);
      merged.set(this.newWords, this.words.length);
      this.words = merged.sort((a, b) => lexicon.compareIds(a, b));
      this.newWords = [];
    }
    // The best so far, in order; most of thousands of words are passed over by their length alone.
    const best: number[] = [];
    const before = (a: number, b: number) => (lexicon.length(a) - lexicon.length(b) || lexicon.compareIds(a, b)) < 0;
    const consider = (id: number) => {
      if (lexicon.length(id) === prefix.length) return;
      if (best.length === max && !before(id, best[max - 1]!)) return;
      let at = best.length;
      while (at > 0 && before(id, best[at - 1]!)) at--;
      best.splice(at, 0, id);
      if (best.length > max) best.pop();
    };
    const words = this.words;
    for (let i = lexicon.lowerBound(words, prefix); i < words.length && lexicon.startsWith(words[i]!, prefix); i++) consider(words[i]!);
    for (const id of this.newWords) if (lexicon.startsWith(id, prefix)) consider(id);
    return best.map((id) => lexicon.text(id));
  }
}
