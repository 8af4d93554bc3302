// Bitsets over every slot, lent to one search and given back once its page is picked. A search
// answered with bitsets (a broad word, a browse) takes a dozen of them, each the size of the
// catalog (125 kB at 1,000,000 outlets). `npm start` has glibc give every buffer of 64 kB or more
// a mapping of its own (scripts/allocator.mjs), so that a reload of the index leaves no holes in
// its heap: allocated afresh, each of those bitsets would be mapped, zeroed page by page and
// unmapped again, a dozen times a search. Lent, the same few are reused.

/** Bitsets kept for reuse, at most this many (a few searches' worth). */
const KEPT = 32;

export class Scratch {
  private readonly free: Uint32Array[] = [];

  /** A zeroed bitset of `words` words. */
  take(words: number): Uint32Array {
    return this.takeAny(words).fill(0);
  }

  /**
   * A bitset of `words` words holding whatever its last user left: for a caller that writes every
   * word of it (a split, the matches), which zeroing first would only make pass over it twice.
   */
  takeAny(words: number): Uint32Array {
    for (let b = this.free.pop(); b !== undefined; b = this.free.pop()) {
      // The index grew since (new slots): older sizes are dropped.
      if (b.length === words) return b;
    }
    return new Uint32Array(words);
  }

  /** Takes bitsets back: nothing may use them after. */
  give(...bits: Uint32Array[]): void {
    for (const b of bits) if (this.free.length < KEPT) this.free.push(b);
  }
}
