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

/**
 * The slots holding each key (a lexeme's id, a name's hash). Those of the load are packed into
 * three arrays (the keys sorted; per key a range of one array of slots): a million keys of one
 * outlet each cost 16 bytes apiece there, against well over 100 as map entries and list objects.
 * Slots written since wait in a map.
 */
export class SlotLists {
  private keys = new Float64Array(0);
  private starts = new Int32Array(1);
  private slots = new Int32Array(0);
  private readonly added = new Map<number, Post>();

  add(key: number, slot: number): void {
    const p = this.added.get(key);
    if (p === undefined) this.added.set(key, slot);
    else if (typeof p === 'number') {
      const list = new Postings();
      list.push(p);
      list.push(slot);
      this.added.set(key, list);
    } else p.push(slot);
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

  has(key: number): boolean {
    return this.added.has(key) || this.find(key) >= 0;
  }

  /** Sets the bits of the key's slots. */
  setBits(bits: Uint32Array, key: number): void {
    const at = this.find(key);
    if (at >= 0) {
      for (let i = this.starts[at]!; i < this.starts[at + 1]!; i++) {
        const s = this.slots[i]!;
        bits[s >>> 5]! |= 1 << (s & 31);
      }
    }
    setPost(bits, this.added.get(key));
  }

  /** Packs the slots added so far with those packed before. */
  pack(): void {
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
}
