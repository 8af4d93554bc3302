/**
 * Every lexeme the index has seen, once, with a small integer id (the key of its posting lists).
 *
 * Why not a `Map<string, number>`: every lexeme (domain labels and names run together make most of
 * them) would be a string object plus a map entry in V8's heap. At a million outlets the process's
 * heap after loading the index was 110 MB that way and is 13 MB this way. V8 keeps the heap pages
 * such objects filled after they die, so when a reload built a new index beside the old one, the
 * process stayed that much larger afterwards. Here the lexemes' characters sit end to end in one
 * array of UTF-16 code units, found through an open-addressing hash table of ids: a few typed
 * arrays, outside the heap, given back whole when the index is dropped.
 *
 * Lexemes compare as JavaScript strings do (by UTF-16 code unit), so the sorted lists made from
 * them are in the same order as `string[].sort()` would give.
 */
export class Lexicon {
  /** The characters of every lexeme, end to end; lexeme `id` is `chars[starts[id] .. starts[id + 1])`. */
  private chars = new Uint16Array(1 << 16);
  private starts = new Int32Array(1 << 12);
  /** Each lexeme's hash: compared before its characters, and used again when the table grows. */
  private hashes = new Int32Array(1 << 12);
  /** Open addressing, at most half full: id + 1 per bucket (0: empty). */
  private table = new Int32Array(1 << 13);
  /** 1 where `flag` held for the lexeme when it was added. */
  private flags = new Uint8Array(1 << 12);
  size = 0;

  /** `flag`: a test of each new lexeme, remembered (`flagged`) so that its text need not be made again. */
  constructor(private readonly flag: (lexeme: string) => boolean = () => false) {}

  /** The lexeme's id, or undefined when it was never added. */
  id(lexeme: string): number | undefined {
    const h = hashOf(lexeme);
    const mask = this.table.length - 1;
    for (let b = h & mask; ; b = (b + 1) & mask) {
      const entry = this.table[b]!;
      if (entry === 0) return undefined;
      if (this.hashes[entry - 1] === h && this.equals(entry - 1, lexeme)) return entry - 1;
    }
  }

  /** The lexeme's id, added if it is new. */
  add(lexeme: string): number {
    const h = hashOf(lexeme);
    const mask = this.table.length - 1;
    let b = h & mask;
    for (; ; b = (b + 1) & mask) {
      const entry = this.table[b]!;
      if (entry === 0) break;
      if (this.hashes[entry - 1] === h && this.equals(entry - 1, lexeme)) return entry - 1;
    }
    const id = this.size++;
    if (this.size + 1 > this.starts.length) {
      this.starts = wider(this.starts, this.starts.length * 2);
      this.hashes = wider(this.hashes, this.starts.length);
      this.flags = wider(this.flags, this.starts.length);
    }
    const at = this.starts[id]!;
    if (at + lexeme.length > this.chars.length) this.chars = wider(this.chars, Math.max(this.chars.length * 2, at + lexeme.length));
    for (let i = 0; i < lexeme.length; i++) this.chars[at + i] = lexeme.charCodeAt(i);
    this.starts[id + 1] = at + lexeme.length;
    this.hashes[id] = h;
    this.flags[id] = this.flag(lexeme) ? 1 : 0;
    this.table[b] = id + 1;
    if (this.size * 2 > this.table.length) this.rehash(this.table.length * 2);
    return id;
  }

  /** Whether the constructor's test held for lexeme `id`. */
  flagged(id: number): boolean {
    return this.flags[id] === 1;
  }

  /** How many code units lexeme `id` has (its string's length). */
  length(id: number): number {
    return this.starts[id + 1]! - this.starts[id]!;
  }

  /** The lexeme itself, as a new string. */
  text(id: number): string {
    return String.fromCharCode(...this.chars.subarray(this.starts[id]!, this.starts[id + 1]!));
  }

  /** Lexeme `id` against `text` as strings compare: negative, zero or positive. */
  compare(id: number, text: string): number {
    const from = this.starts[id]!;
    const len = this.starts[id + 1]! - from;
    const n = Math.min(len, text.length);
    for (let i = 0; i < n; i++) {
      const d = this.chars[from + i]! - text.charCodeAt(i);
      if (d !== 0) return d;
    }
    return len - text.length;
  }

  /** Two lexemes as strings compare. */
  compareIds(a: number, b: number): number {
    const fa = this.starts[a]!;
    const la = this.starts[a + 1]! - fa;
    const fb = this.starts[b]!;
    const lb = this.starts[b + 1]! - fb;
    const n = Math.min(la, lb);
    for (let i = 0; i < n; i++) {
      const d = this.chars[fa + i]! - this.chars[fb + i]!;
      if (d !== 0) return d;
    }
    return la - lb;
  }

  /** Whether lexeme `id` starts with `prefix`. */
  startsWith(id: number, prefix: string): boolean {
    const from = this.starts[id]!;
    if (this.starts[id + 1]! - from < prefix.length) return false;
    for (let i = 0; i < prefix.length; i++) if (this.chars[from + i] !== prefix.charCodeAt(i)) return false;
    return true;
  }

  /** The first index of `sorted` (ids in string order) whose lexeme is not below `text`. */
  lowerBound(sorted: Int32Array, text: string): number {
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.compare(sorted[mid]!, text) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private equals(id: number, text: string): boolean {
    const from = this.starts[id]!;
    if (this.starts[id + 1]! - from !== text.length) return false;
    for (let i = 0; i < text.length; i++) if (this.chars[from + i] !== text.charCodeAt(i)) return false;
    return true;
  }

  private rehash(buckets: number): void {
    const table = new Int32Array(buckets);
    const mask = buckets - 1;
    for (let id = 0; id < this.size; id++) {
      let b = this.hashes[id]! & mask;
      while (table[b] !== 0) b = (b + 1) & mask;
      table[b] = id + 1;
    }
    this.table = table;
  }
}

/** FNV-1a over UTF-16 code units, with a final mix so that the low bits (the bucket) vary well. */
function hashOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  return h ^ (h >>> 13);
}

function wider<T extends Uint8Array | Uint16Array | Int32Array>(a: T, length: number): T {
  const b = new (a.constructor as new (n: number) => T)(length);
  b.set(a);
  return b;
}
