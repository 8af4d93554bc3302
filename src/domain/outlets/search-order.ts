import { hasSlot } from './slot-bits.js';
/**
 * The slots of the search index in one sort order (most traffic first, or cheapest first), so that
 * a page is the first slots of the order whose bit is set: a bit test per slot, however the
 * matches and the order disagree. A slot never changes (a changed outlet takes a new slot), so the
 * order stays valid as slots are added: new ones go into a sorted tail (a binary search and a
 * move of the slots after it: with writes arriving between searches, sorting the whole tail again
 * for the next search cost that search milliseconds at 1M) and are merged into the main order when
 * the tail grows; dead slots leave the order at that merge (until then their bits are never set,
 * so a walk passes them).
 */
export class SlotOrder {
  private main = new Int32Array(0);
  private tail: number[] = [];
  /**
   * Per tail slot, where it goes in `main` (how many of main's slots come before it): found once
   * when it is added, so that a walk merges the two without calling `before` at each slot it passes
   * (a page of rare matches passes hundreds of thousands).
   */
  private tailAt: number[] = [];
  /** Before the first settle() (the load) the tail is only appended to, and sorted then. */
  private loading = true;

  /**
   * `before(a, b)` < 0 when slot a comes first; it must decide every pair of distinct slots (ties
   * broken by outlet id). `keeps(s)`: whether slot s belongs (alive, and priced for a price order).
   * `figure(s)`, when given: the figure the order ascends by (a price), so that a walk whose
   * matches all lie at or below a figure can skip the slots above it (`firstIn`'s `upTo`).
   */
  constructor(
    readonly before: (a: number, b: number) => number,
    private readonly keeps: (s: number) => boolean,
    private readonly figure?: (s: number) => number,
  ) {}

  add(slot: number): void {
    if (this.loading) {
      this.tail.push(slot);
      return;
    }
    let lo = 0;
    let hi = this.tail.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.before(this.tail[mid]!, slot) < 0) lo = mid + 1;
      else hi = mid;
    }
    this.tail.splice(lo, 0, slot);
    this.tailAt.splice(lo, 0, this.placeInMain(slot));
  }

  private placeInMain(slot: number): number {
    let lo = 0;
    let hi = this.main.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.before(this.main[mid]!, slot) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * How many slots a walk bounded by `upTo` passes at most: the main order's slots whose figure is
   * at most `upTo` (a binary search), and the tail's. All of them without a bound or a figure.
   */
  span(upTo?: number): number {
    this.settle();
    return this.mainEnd(upTo) + this.tail.length;
  }

  /** Where the main order's slots with a figure above `upTo` begin (its length when none do). */
  private mainEnd(upTo: number | undefined): number {
    const figure = this.figure;
    if (upTo === undefined || figure === undefined) return this.main.length;
    let lo = 0;
    let hi = this.main.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (figure(this.main[mid]!) <= upTo) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Merges the tail into the main order once it is a sizeable share of it (at the load: all of it). */
  settle(): void {
    if (this.loading) {
      this.tail.sort(this.before);
      this.loading = false;
    }
    if (this.tail.length > Math.max(4_096, this.main.length >>> 4)) {
      const added = Int32Array.from(this.tail.filter(this.keeps));
      const merged = new Int32Array(this.main.length + added.length);
      let i = 0;
      let j = 0;
      let k = 0;
      while (i < this.main.length || j < added.length) {
        const a = this.main[i];
        if (a !== undefined && !this.keeps(a)) {
          i++;
          continue;
        }
        const b = added[j];
        merged[k++] = a !== undefined && (b === undefined || this.before(a, b) < 0) ? this.main[i++]! : added[j++]!;
      }
      this.main = merged.slice(0, k);
      this.tail = [];
    }
    if (this.tailAt.length !== this.tail.length) this.tailAt = this.tail.map((s) => this.placeInMain(s));
  }

  /**
   * The first `m` slots whose bit is set in `bits`, in this order (or the opposite one), and how
   * many slots were passed to find them. `upTo`: no slot in `bits` has a figure above it (a price
   * bound the matches were narrowed by), so the main order's slots above it are not passed: read
   * backwards (`-price`), the walk starts below them instead of passing every dearer outlet first.
   */
  firstIn(bits: Uint32Array, m: number, reverse: boolean, upTo?: number): { slots: number[]; passed: number } {
    this.settle();
    const main = this.main;
    const end = this.mainEnd(upTo);
    const tail = this.tail;
    const slots: number[] = [];
    const step = reverse ? -1 : 1;
    let i = reverse ? end - 1 : 0;
    let j = reverse ? tail.length - 1 : 0;
    let passed = 0;
    const has = (s: number) => hasSlot(bits, s);
    if (tail.length === 0) {
      for (; i >= 0 && i < end && slots.length < m; i += step, passed++) if (has(main[i]!)) slots.push(main[i]!);
      return { slots, passed };
    }
    // A tail slot goes just before main[tailAt[j]]: forwards it is taken once i reaches that place,
    // backwards as soon as main[i] is one of those before it.
    const at = this.tailAt;
    while (slots.length < m) {
      let s: number;
      if (reverse ? j >= 0 && at[j]! > i : j < tail.length && at[j]! <= i) {
        s = tail[j]!;
        j += step;
      } else if (i >= 0 && i < end) {
        s = main[i]!;
        i += step;
      } else break;
      passed++;
      if (has(s)) slots.push(s);
    }
    return { slots, passed };
  }
}
