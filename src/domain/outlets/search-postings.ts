/** A growable list of slots. */
class Postings {
  items = new Int32Array(4);
  length = 0;
  push(slot: number): void {
    if (this.length === this.items.length) {
      const grown = new Int32Array(this.items.length * 2);
      grown.set(this.items);
      this.items = grown;
    }
    this.items[this.length++] = slot;
  }
}

/** One slot as a plain number: most keys at scale (domain labels, names) hold one outlet. */
type Post = number | Postings;

function setPost(bits: Uint32Array, p: Post | undefined): void {
  if (p === undefined) return;
  if (typeof p === 'number') {
    bits[p >>> 5]! |= 1 << (p & 31);
    return;
  }
  for (let i = 0; i < p.length; i++) {
    const s = p.items[i]!;
    bits[s >>> 5]! |= 1 << (s & 31);
  }
}

/** Growable pairs of (key, slot) in large chunks: a load appends tens of millions of them. */
class Pairs {
  static readonly CHUNK = 1 << 20;
  readonly keys: Float64Array[] = [];
  readonly slots: Int32Array[] = [];
  length = 0;
  push(key: number, slot: number): void {
    const at = this.length % Pairs.CHUNK;
    if (at === 0) {
      this.keys.push(new Float64Array(Pairs.CHUNK));
      this.slots.push(new Int32Array(Pairs.CHUNK));
    }
    this.keys.at(-1)![at] = key;
    this.slots.at(-1)![at] = slot;
    this.length++;
  }
  /** Calls `fn` on every pair, in order; `pause` between chunks (a million pairs each) when given. */
  async forEach(fn: (key: number, slot: number) => void, pause?: Pause): Promise<void> {
    for (let c = 0; c < this.keys.length; c++) {
      if (c > 0 && pause) await pause();
      const keys = this.keys[c]!;
      const slots = this.slots[c]!;
      const n = c === this.keys.length - 1 ? this.length - c * Pairs.CHUNK : Pairs.CHUNK;
      for (let i = 0; i < n; i++) fn(keys[i]!, slots[i]!);
    }
  }
}

/** Gives the event loop back (setImmediate) between the pieces of a long piece of work. */
export type Pause = () => Promise<void>;

/**
 * The slots holding each key (a lexeme's id, a name's hash). Those of the load are packed into
 * three arrays (the keys sorted; per key a range of one array of slots): a million keys of one
 * outlet each cost 16 bytes apiece there, against well over 100 as map entries and list objects.
 * Until the first pack (the load) they are appended as pairs to a few large arrays, which go back
 * to the system whole once packed; slots written after it wait in a map.
 */
export class SlotLists {
  private keys = new Float64Array(0);
  private starts = new Int32Array(1);
  private slots = new Int32Array(0);
  private loading: Pairs | undefined = new Pairs();
  private readonly added = new Map<number, Post>();
  /**
   * The keys holding many slots (more than one in 32 of those packed), also as bitsets: a broad
   * word's slots are then OR-ed in a word at a time instead of set one by one (275,000 of them
   * for `news` at 1M outlets). Kept current as slots are added.
   */
  private readonly dense = new Map<number, Uint32Array>();

  add(key: number, slot: number): void {
    if (this.loading) {
      this.loading.push(key, slot);
      return;
    }
    const d = this.dense.get(key);
    if (d) {
      const bits = (slot >>> 5) < d.length ? d : this.widen(key, d, slot);
      bits[slot >>> 5]! |= 1 << (slot & 31);
    }
    const p = this.added.get(key);
    if (p === undefined) this.added.set(key, slot);
    else if (typeof p === 'number') {
      const list = new Postings();
      list.push(p);
      list.push(slot);
      this.added.set(key, list);
    } else p.push(slot);
    // A large import after the load (a process started before it) is packed as it grows, so
    // that memory stays what a load would take.
    if (this.added.size > Math.max(65_536, this.keys.length >>> 2)) this.pack();
  }

  private find(key: number): number {
    let lo = 0;
    let hi = this.keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.keys[mid]! < key) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.keys.length && this.keys[lo] === key ? lo : -1;
  }

  /** After the first pack. */
  has(key: number): boolean {
    return this.added.has(key) || this.find(key) >= 0;
  }

  /** The keys (after the first pack). */
  forEachKey(fn: (key: number) => void): void {
    for (const k of this.keys) fn(k);
    for (const k of this.added.keys()) fn(k);
  }

  private widen(key: number, d: Uint32Array, slot: number): Uint32Array {
    const wider = new Uint32Array(Math.max((slot >>> 5) + 1, d.length * 2));
    wider.set(d);
    this.dense.set(key, wider);
    return wider;
  }

  /** Sets the bits of the key's slots. */
  setBits(bits: Uint32Array, key: number): void {
    const d = this.dense.get(key);
    if (d) {
      for (let i = 0, n = Math.min(bits.length, d.length); i < n; i++) bits[i]! |= d[i]!;
      return;
    }
    const at = this.find(key);
    if (at >= 0) {
      for (let i = this.starts[at]!; i < this.starts[at + 1]!; i++) {
        const s = this.slots[i]!;
        bits[s >>> 5]! |= 1 << (s & 31);
      }
    }
    setPost(bits, this.added.get(key));
  }

  /** The key's bitset, when it holds many slots (see `dense`). */
  bitsOf(key: number): Uint32Array | undefined {
    return this.dense.get(key);
  }

  /**
   * The key's slots as ascending runs (those packed, those added since; each run ascending, as
   * slots are handed out in ascending order): read in place, not copied.
   */
  runs(key: number): Int32Array[] {
    const out: Int32Array[] = [];
    const at = this.find(key);
    if (at >= 0) out.push(this.slots.subarray(this.starts[at]!, this.starts[at + 1]!));
    const p = this.added.get(key);
    if (typeof p === 'number') out.push(Int32Array.of(p));
    else if (p) out.push(p.items.subarray(0, p.length));
    return out;
  }

  /**
   * The load's pack (the first one), in pieces with `pause` between them: at 1M outlets the
   * lexemes' pairs are tens of millions, and packing them in one piece held the event loop up for
   * seconds, the index in use (a reload's) and /healthz included (issue 56).
   */
  async packLoaded(pause: Pause): Promise<void> {
    if (!this.loading) return this.pack();
    await this.packLoad(this.loading, pause);
    this.loading = undefined;
    await this.densify(pause);
  }

  /** Packs the slots added so far with those packed before. */
  pack(): void {
    if (this.loading) throw new Error('SlotLists: the load is packed by packLoaded()');
    if (this.added.size === 0) return;
    const keys = Float64Array.from(new Set([...this.keys, ...this.added.keys()])).sort();
    const sizeOf = (p: Post | undefined) => (p === undefined ? 0 : typeof p === 'number' ? 1 : p.length);
    const starts = new Int32Array(keys.length + 1);
    let total = 0;
    const old = keys.map((k) => this.find(k));
    for (let i = 0; i < keys.length; i++) {
      starts[i] = total;
      const o = old[i]!;
      total += (o >= 0 ? this.starts[o + 1]! - this.starts[o]! : 0) + sizeOf(this.added.get(keys[i]!));
    }
    starts[keys.length] = total;
    const slots = new Int32Array(total);
    for (let i = 0; i < keys.length; i++) {
      let at = starts[i]!;
      const o = old[i]!;
      if (o >= 0) {
        slots.set(this.slots.subarray(this.starts[o]!, this.starts[o + 1]!), at);
        at += this.starts[o + 1]! - this.starts[o]!;
      }
      const p = this.added.get(keys[i]!);
      if (typeof p === 'number') slots[at] = p;
      else if (p) slots.set(p.items.subarray(0, p.length), at);
    }
    this.keys = keys;
    this.starts = starts;
    this.slots = slots;
    this.added.clear();
  }

  /** The bitsets of the keys holding many slots (at the load's pack: later ones stay lists). */
  private async densify(pause: Pause): Promise<void> {
    let top = 0;
    for (const s of this.slots) if (s > top) top = s;
    const words = (top >>> 5) + 1;
    let work = 0;
    for (let k = 0; k < this.keys.length; k++) {
      // About a million slots or words touched between pauses.
      if (work > 1 << 20) {
        work = 0;
        await pause();
      }
      work += this.starts[k + 1]! - this.starts[k]!;
      const from = this.starts[k]!;
      const to = this.starts[k + 1]!;
      // Worth it when the list is longer than a bitset is words: then it is also the smaller.
      if (to - from <= words) continue;
      work += words;
      // With room for the slots written after the load (a sixteenth more), so that the first writes
      // do not each copy every broad word's bitset to a wider one (widen) while searches wait.
      const bits = new Uint32Array(words + (words >>> 4) + 1);
      for (let i = from; i < to; i++) {
        const s = this.slots[i]!;
        bits[s >>> 5]! |= 1 << (s & 31);
      }
      this.dense.set(this.keys[k]!, bits);
    }
  }

  /** The pairs of the load, by key: a count per key, then each slot in its key's range. */
  private async packLoad(pairs: Pairs, pause: Pause): Promise<void> {
    // Small non-negative integer keys (lexeme ids, topic codes) index a table directly; others
    // (hashes) are sorted and looked up.
    let max = -1;
    let small = true;
    await pairs.forEach((k) => {
      if (k > max) max = k;
      if (k < 0 || !Number.isInteger(k)) small = false;
    }, pause);
    small &&= max < Pairs.CHUNK * 64;
    let keys: Float64Array<ArrayBuffer>;
    let indexOf: (k: number) => number;
    if (small) {
      const count = new Int32Array(max + 1);
      await pairs.forEach((k) => count[k]!++, pause);
      const index = new Int32Array(max + 1);
      let unique = 0;
      for (let k = 0; k <= max; k++) if (count[k]! > 0) index[k] = unique++;
      keys = new Float64Array(unique);
      for (let k = 0; k <= max; k++) if (count[k]! > 0) keys[index[k]!] = k;
      indexOf = (k) => index[k]!;
    } else {
      const all = new Float64Array(pairs.length);
      let n = 0;
      await pairs.forEach((k) => (all[n++] = k), pause);
      all.sort();
      let unique = 0;
      for (let i = 0; i < all.length; i++) if (i === 0 || all[i] !== all[i - 1]) all[unique++] = all[i]!;
      keys = all.slice(0, unique);
      indexOf = (k) => {
        let lo = 0;
        let hi = keys.length;
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          if (keys[mid]! < k) lo = mid + 1;
          else hi = mid;
        }
        return lo;
      };
    }
    const starts = new Int32Array(keys.length + 1);
    await pairs.forEach((k) => starts[indexOf(k) + 1]!++, pause);
    for (let i = 0; i < keys.length; i++) starts[i + 1]! += starts[i]!;
    const next = starts.slice(0, keys.length);
    const slots = new Int32Array(pairs.length);
    await pairs.forEach((k, s) => (slots[next[indexOf(k)]!++] = s), pause);
    this.keys = keys;
    this.starts = starts;
    this.slots = slots;
  }
}

/** Whether an ascending run holds the slot (a binary search). */
export function runHas(run: Int32Array, slot: number): boolean {
  let lo = 0;
  let hi = run.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (run[mid]! < slot) lo = mid + 1;
    else hi = mid;
  }
  return lo < run.length && run[lo] === slot;
}
