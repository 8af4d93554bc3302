import type { OfferFormat } from './enums.js';
import { type FilterView, narrowings, type SearchFilter, within } from './search-filter.js';
import { CatalogWords } from './search-completions.js';
import { SlotOrder } from './search-order.js';
import { Lexicon } from './search-lexicon.js';
import { runHas, SlotLists } from './search-postings.js';
import { Scratch } from './search-scratch.js';
import { type Write, WriteLog } from './search-writes.js';
import type { Vocabulary } from './search-terms.js';
import { hasSlot } from './slot-bits.js';

// What outlet search tests, per outlet, in this process's memory: the lexemes of its search_vector
// and name_vector exactly as PostgreSQL made them (read with tsvector_to_array, so stemming and
// tokenising are PostgreSQL's), its exact name and domain (as hashes), and the filtered and sorted
// columns, as posting lists, bitsets and slot orders over slots (one slot per outlet version). A
// search (search-query.ts) reads them: its words' posting lists and the filters give the universe
// of its matches, ranking rules (search-rules.ts) split it into buckets, best first, and the page
// is the first slots of a slot order by traffic (or price, or a track-record figure) within them.
// PostgreSQL then reads only the page's rows, by id.
//
// It is loaded at start (search-loader.ts; the service is not ready until then) and kept current
// from PostgreSQL: a trigger on outlets sends the ids of the rows each statement wrote (NOTIFY
// outlets_changed), and the engine (search-engine.ts) has the loader read those rows again.

/** The words of a search: each group must match (AND), through any of its lexemes. */
export interface TextQuery {
  exactName: string;
  domain: string | undefined;
  groups: { lexemes: string[] }[];
}

/** A format's place among the index's cheapest-offer columns. */
export const PRICE_INDEX: Record<OfferFormat | 'any', number> = { any: 0, guest_post: 1, sponsored_article: 2, link_insertion: 3, press_release: 4 };
const SEP = '\u001f';

/**
 * Price steps, in cents ($10, $20, $50 … $10,000): per format, the slots priced at most each step
 * are kept as bitsets, so that a price bound is mostly bits ANDed (search-filter.ts, Bound) rather
 * than every match's price read, which cost a broad search with a bound half its time at 1M.
 */
export const PRICE_STEPS = [1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000] as const;

/**
 * What the index reads of an outlet (search-loader.ts reads it so): its filtered and sorted
 * columns, and its lexemes, topics and topic lexemes joined by U+001F.
 */
export interface IndexRow {
  id: number;
  name: string;
  domain: string;
  type: string;
  country: string;
  language: string;
  verified: boolean;
  visits: number;
  p0: number | null;
  p1: number | null;
  p2: number | null;
  p3: number | null;
  p4: number | null;
  topics: string;
  terms: string;
  name_terms: string;
  topic_terms: string;
  on_time: string | null;
  acceptance: string | null;
  rating: string | null;
}

/** Of an outlet's orders: links checked at or after 30 / 60 days from completion, and of those alive; first checks made and passed. */
export interface CheckCounts {
  n30: number;
  a30: number;
  n60: number;
  a60: number;
  nv: number;
  pv: number;
}

/**
 * An outlet's checked links and placements (`sort=link_survival`, `sort=verification`), kept only
 * for the slots of outlets that have any: rates in thousandths as the track record rounds them
 * (-1: none checked).
 */
interface Checks {
  s30: number;
  s60: number;
  n30: number;
  n60: number;
  verified: number;
  nv: number;
}

const perMille = (part: number, whole: number) => (whole > 0 ? Math.round((part * 1000) / whole) : -1);

/** The 53-bit hash of a string (cyrb53): exact names and domains are kept as these, not as strings. */
function hash53(str: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < str.length; i++) {
    const ch = str.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}
export const nameKey = (name: string) => hash53(`n${SEP}${name}`);
export const domainKey = (domain: string) => hash53(`d${SEP}${domain}`);

/** Small dictionaries: a value's code, the same on every row that has it. */
class Codes {
  private readonly map = new Map<string, number>();
  code(value: string): number {
    let c = this.map.get(value);
    if (c === undefined) this.map.set(value, (c = this.map.size));
    return c;
  }
  find(value: string): number | undefined {
    return this.map.get(value);
  }
  values(): string[] {
    return [...this.map.keys()];
  }
}

/** What the planner's pre-rank reads of an outlet (the baseline track record: null when none is stored). */
export interface OutletFigures {
  id: number;
  visits: number;
  verified: boolean;
  onTime: number | null;
  acceptance: number | null;
  rating: number | null;
}

/** What search_terms holds: lexemes of letters only (not numbers, not domain labels with digits or hyphens). */
const WORD = /^\p{L}+$/u;

export class SearchIndex implements Vocabulary, FilterView {
  /** An outlet's current slot + 1, by outlet id (0: none); a changed outlet gets a new slot and its old one dies. */
  private slotOf = new Int32Array(0);
  private size = 0;
  private capacity = 0;
  private ids = new Int32Array(0);
  private type = new Uint8Array(0);
  private country = new Uint16Array(0);
  private language = new Uint16Array(0);
  private verified = new Uint8Array(0);
  private visitsOf = new Float64Array(0);
  private prices: Float64Array[] = [];
  /** Per format (PRICE_INDEX), per PRICE_STEPS step: the slots with an active offer of the format at most that price. */
  private priceStepBits: Uint32Array[][] = [];
  private readonly codes = { type: new Codes(), country: new Codes(), language: new Codes() };
  /** Every lexeme once: its id indexes both posting lists (search_vector's and name_vector's); flagged if a WORD. */
  readonly lexicon = new Lexicon((lexeme) => WORD.test(lexeme));
  readonly terms = new SlotLists();
  readonly nameTerms = new SlotLists();
  /** The topics' lexemes (search_vector's weight B), for the planner's "matched in the topics". */
  readonly topicTerms = new SlotLists();
  /** The stored baseline track record (NaN: none), for the planner's quality. */
  private onTime = new Float64Array(0);
  private acceptance = new Float64Array(0);
  private rating = new Float64Array(0);
  /** How many lexemes a slot's search_vector and name_vector hold (a write that keeps the words is told by them). */
  private termCount = new Uint16Array(0);
  private nameCount = new Uint16Array(0);
  /** The writes since the load (the last few thousand), for the engine's remembered searches. */
  private readonly writes = new WriteLog();
  /** Topics, by their code. */
  readonly topics = new SlotLists();
  private readonly topicCodes = new Codes();
  /** Lower-cased names and domains, by hash: the exact tier. */
  readonly exacts = new SlotLists();
  /**
   * One bit per slot for each filter value (`type:<code>`, `country:<code>`, `language:<code>`,
   * `topic:<code>`, `verified:<0|1>`), for being alive (`alive`) and for having an active offer of a format
   * (`price:<index>`): a search ANDs these word by word instead of testing each match.
   */
  private readonly bitsets = new Map<string, Uint32Array>();
  /** Most traffic first (then the highest id): relevance within a tier, `-traffic`, `traffic` read backwards. */
  readonly byTraffic = new SlotOrder(
    (a, b) => this.visitsOf[b]! - this.visitsOf[a]! || this.ids[b]! - this.ids[a]!,
    (s) => this.alive(s),
  );
  /** Per format (PRICE_INDEX), cheapest first (then the lowest id): `price`, `-price` read backwards. */
  readonly byPrice = [0, 1, 2, 3, 4].map(
    (i) =>
      new SlotOrder(
        (a, b) => this.prices[i]![a]! - this.prices[i]![b]! || this.ids[a]! - this.ids[b]!,
        (s) => this.alive(s) && !Number.isNaN(this.prices[i]![s]!),
        (s) => this.prices[i]![s]!,
      ),
  );
  /** Check results of the slots of outlets that have any (a dead slot's stay: an order may still compare it). */
  private readonly checks = new Map<number, Checks>();
  /**
   * The slots with links checked (bitset `survival`), best survival first: 30 days, then 60 (none
   * last), then more links checked, more traffic, the highest id. The matches without any follow
   * in traffic order.
   */
  readonly bySurvival = new SlotOrder(
    (a, b) => {
      const x = this.checks.get(a)!;
      const y = this.checks.get(b)!;
      return y.s30 - x.s30 || y.s60 - x.s60 || y.n30 - x.n30 || y.n60 - x.n60 || this.byTraffic.before(a, b);
    },
    (s) => this.alive(s) && this.has('survival', s),
  );
  /** The slots with placements checked (bitset `verification`): best pass rate, then more checked, more traffic. */
  readonly byVerification = new SlotOrder(
    (a, b) => {
      const x = this.checks.get(a)!;
      const y = this.checks.get(b)!;
      return y.verified - x.verified || y.nv - x.nv || this.byTraffic.before(a, b);
    },
    (s) => this.alive(s) && this.has('verification', s),
  );
  /** The words (WORD) of search_vector, for completions and the warm-up. */
  private readonly words = new CatalogWords(this.lexicon, this.terms);
  /** Bumped by every write: what was remembered of an older version is stale. */
  version = 0;
  private scratch = new Int32Array(0);
  /** Bitsets over every slot lent to searches (search-scratch.ts). */
  readonly lender = new Scratch();
  /** Slots of outlets written again since (the engine reloads when they are many). */
  dead = 0;
  ready = false;

  // Read by a search (search-query.ts): the fields above without `private`, and these.

  /** Slots in all (live and dead): the size of every bitset over them. */
  get slotCount(): number {
    return this.size;
  }

  /** The outlet a slot holds (a version of it). */
  idOf(slot: number): number {
    return this.ids[slot]!;
  }

  /** The slots alive, with links checked (`sort=link_survival`), with placements checked (`sort=verification`). */
  bitsOf(key: 'alive' | 'survival' | 'verification'): Uint32Array {
    return this.bitset(key);
  }

  private alive(s: number): boolean {
    return this.has('alive', s);
  }

  private has(key: string, s: number): boolean {
    const bits = this.bitsets.get(key);
    return bits !== undefined && (bits[s >>> 5]! & (1 << (s & 31))) !== 0;
  }

  private grow(min: number): void {
    if (min <= this.capacity) return;
    const cap = Math.max(min, this.capacity * 2, 1024);
    const copy = <T extends Uint8Array | Uint16Array | Int32Array | Float64Array>(a: T, make: (n: number) => T): T => {
      const b = make(cap);
      b.set(a);
      return b;
    };
    this.ids = copy(this.ids, (n) => new Int32Array(n));
    this.type = copy(this.type, (n) => new Uint8Array(n));
    this.country = copy(this.country, (n) => new Uint16Array(n));
    this.language = copy(this.language, (n) => new Uint16Array(n));
    this.verified = copy(this.verified, (n) => new Uint8Array(n));
    this.visitsOf = copy(this.visitsOf, (n) => new Float64Array(n));
    this.onTime = copy(this.onTime, (n) => new Float64Array(n));
    this.acceptance = copy(this.acceptance, (n) => new Float64Array(n));
    this.termCount = copy(this.termCount, (n) => new Uint16Array(n));
    this.nameCount = copy(this.nameCount, (n) => new Uint16Array(n));
    this.rating = copy(this.rating, (n) => new Float64Array(n));
    this.prices = [0, 1, 2, 3, 4].map((i) => copy(this.prices[i] ?? new Float64Array(0), (n) => new Float64Array(n)));
    const wider = (bits: Uint32Array) => {
      const w = new Uint32Array((cap + 31) >>> 5);
      w.set(bits);
      return w;
    };
    for (const [key, bits] of this.bitsets) this.bitsets.set(key, wider(bits));
    this.priceStepBits = [0, 1, 2, 3, 4].map((i) => PRICE_STEPS.map((_, k) => wider(this.priceStepBits[i]?.[k] ?? new Uint32Array(0))));
    this.capacity = cap;
  }

  private bitset(key: string): Uint32Array {
    let bits = this.bitsets.get(key);
    if (!bits) this.bitsets.set(key, (bits = new Uint32Array((this.capacity + 31) >>> 5)));
    return bits;
  }

  private flag(key: string, s: number, on: boolean): void {
    const bits = this.bitset(key);
    if (on) bits[s >>> 5]! |= 1 << (s & 31);
    else bits[s >>> 5]! &= ~(1 << (s & 31));
  }

  /** Adds the outlet's current version (search-loader.ts): a new slot; its old one, if any, dies. */
  put(r: IndexRow, c: CheckCounts): void {
    this.version++;
    if (r.id >= this.slotOf.length) {
      const wider = new Int32Array(Math.max(r.id + 1, this.slotOf.length * 2, 1024));
      wider.set(this.slotOf);
      this.slotOf = wider;
    }
    const old = this.slotOf[r.id]! - 1;
    if (old >= 0) {
      this.flag('alive', old, false);
      this.dead++;
    }
    const s = this.size++;
    this.grow(this.size);
    this.slotOf[r.id] = s + 1;
    this.ids[s] = r.id;
    this.flag('alive', s, true);
    this.type[s] = this.codes.type.code(r.type);
    this.country[s] = this.codes.country.code(r.country);
    this.language[s] = this.codes.language.code(r.language);
    this.verified[s] = r.verified ? 1 : 0;
    this.flag(`type:${this.type[s]}`, s, true);
    this.flag(`country:${this.country[s]}`, s, true);
    this.flag(`language:${this.language[s]}`, s, true);
    this.flag(`verified:${this.verified[s]}`, s, true);
    this.visitsOf[s] = r.visits;
    this.onTime[s] = r.on_time === null ? NaN : Number(r.on_time);
    this.acceptance[s] = r.acceptance === null ? NaN : Number(r.acceptance);
    this.rating[s] = r.rating === null ? NaN : Number(r.rating);
    this.byTraffic.add(s);
    [r.p0, r.p1, r.p2, r.p3, r.p4].forEach((p, i) => {
      this.prices[i]![s] = p ?? NaN;
      if (p !== null) {
        this.flag(`price:${i}`, s, true);
        this.byPrice[i]!.add(s);
        // Those of the load are set in one pass when it ends (settle).
        if (this.ready) this.setPriceSteps(i, s, p);
      }
    });
    if (c.n30 > 0 || c.n60 > 0 || c.nv > 0) {
      this.checks.set(s, { s30: perMille(c.a30, c.n30), s60: perMille(c.a60, c.n60), n30: c.n30, n60: c.n60, verified: perMille(c.pv, c.nv), nv: c.nv });
      if (c.n30 > 0 || c.n60 > 0) {
        this.flag('survival', s, true);
        this.bySurvival.add(s);
      }
      if (c.nv > 0) {
        this.flag('verification', s, true);
        this.byVerification.add(s);
      }
    }
    const terms = r.terms ? r.terms.split(SEP) : [];
    const names = r.name_terms ? r.name_terms.split(SEP) : [];
    // After the load, what the write could change is recorded (search-writes.ts): first whether
    // the old version had the same words (the same number of lexemes, each of them, the same name
    // and domain), read before the new slot is added to the lists.
    const write = this.ready ? this.sameWords(old, terms, names, r) : false;
    const known = this.words.version;
    for (const t of terms) {
      const id = this.lexicon.add(t);
      if (this.ready && !this.terms.has(id) && this.lexicon.flagged(id)) {
        this.words.added(id);
      }
      this.terms.add(id, s);
    }
    for (const t of names) this.nameTerms.add(this.lexicon.add(t), s);
    this.termCount[s] = Math.min(terms.length, 0xffff);
    this.nameCount[s] = Math.min(names.length, 0xffff);
    if (this.ready) {
      this.writes.record(this.version, {
        slot: s,
        old,
        terms: new Set(terms),
        names: new Set(names),
        name: nameKey(r.name),
        domain: domainKey(r.domain),
        any: !write || this.words.version > known,
      });
    }
    if (r.topic_terms) for (const t of r.topic_terms.split(SEP)) this.topicTerms.add(this.lexicon.add(t), s);
    if (r.topics) {
      for (const t of r.topics.split(SEP)) {
        const code = this.topicCodes.code(t);
        this.topics.add(code, s);
        this.flag(`topic:${code}`, s, true);
      }
    }
    this.exacts.add(nameKey(r.name), s);
    this.exacts.add(domainKey(r.domain), s);
  }

  /** Puts slot `s` in the format's steps at or above its price `p`. */
  private setPriceSteps(format: number, s: number, p: number): void {
    const steps = this.priceStepBits[format]!;
    let k = 0;
    while (k < PRICE_STEPS.length && PRICE_STEPS[k]! < p) k++;
    for (; k < PRICE_STEPS.length; k++) steps[k]![s >>> 5]! |= 1 << (s & 31);
  }

  /** Whether the outlet's old slot (-1: none) had exactly these lexemes and this name and domain. */
  private sameWords(old: number, terms: string[], names: string[], r: IndexRow): boolean {
    if (old < 0 || this.termCount[old] !== terms.length || this.nameCount[old] !== names.length) return false;
    const holds = (lists: SlotLists, key: number | undefined) => key !== undefined && lists.runs(key).some((run) => runHas(run, old));
    return (
      terms.every((t) => holds(this.terms, this.lexicon.id(t))) &&
      names.every((t) => holds(this.nameTerms, this.lexicon.id(t))) &&
      holds(this.exacts, nameKey(r.name)) &&
      holds(this.exacts, domainKey(r.domain))
    );
  }

  /**
   * Whether no write after `version` can have changed what the search (its words, none for a
   * browse, and filter) finds: none of the written outlets matches it, as it was or as it is.
   * False when the writes since are no longer all kept.
   */
  unchangedSince(version: number, q: TextQuery | undefined, f: SearchFilter): boolean {
    if (version === this.version) return true;
    const writes = this.writes.between(version, this.version);
    if (!writes) return false;
    let filters: ((s: number) => boolean)[] | undefined;
    for (const w of writes) {
      if (w.any) return false;
      if (q && !this.wordsMatch(w, q)) continue;
      filters ??= narrowings(f, this).map((nw) => ('bound' in nw ? (s: number) => within(nw.bound, s) : (s: number) => nw.anyOf.some((b) => b !== undefined && hasSlot(b, s))));
      const passes = (s: number) => filters!.every((t) => t(s));
      if (passes(w.slot) || (w.old >= 0 && passes(w.old))) return false;
    }
    return true;
  }

  /** Whether a written outlet's words match the search's (as the universe counts them: exact, in the name, anywhere). */
  private wordsMatch(w: Write, q: TextQuery): boolean {
    if (w.name === nameKey(q.exactName) || (q.domain !== undefined && w.domain === domainKey(q.domain))) return true;
    if (q.groups.length === 0) return false;
    const every = (lexemes: ReadonlySet<string>) => q.groups.every((g) => g.lexemes.some((l) => lexemes.has(l)));
    return every(w.terms) || every(w.names);
  }

  /**
   * Once every outlet is put (search-loader.ts): the slot orders sorted and the posting lists
   * packed, `pause` awaited between the pieces; the words for completions sorted. Ready then.
   */
  async settle(pause: () => Promise<void>): Promise<void> {
    for (const o of [this.byTraffic, ...this.byPrice, this.bySurvival, this.byVerification]) {
      o.settle();
      await pause();
    }
    // A format's prices at 1M took 13–39 ms in one piece: a quarter of a million slots a piece.
    for (let i = 0; i < this.prices.length; i++) {
      const prices = this.prices[i]!;
      for (let from = 0; from < this.size; from += 1 << 18) {
        const to = Math.min(this.size, from + (1 << 18));
        for (let s = from; s < to; s++) if (!Number.isNaN(prices[s]!)) this.setPriceSteps(i, s, prices[s]!);
        await pause();
      }
    }
    for (const lists of [this.terms, this.nameTerms, this.topicTerms, this.topics, this.exacts]) await lists.packLoaded(pause);
    this.words.settle();
    this.ready = true;
  }

  /** Words of the catalog to warm the search up with (search-warmup.ts; CatalogWords.sample). */
  sampleWords(count: number): string[] {
    return this.words.sample(count);
  }

  /** The catalog's `count` most used words (in most outlets first), for the engine to look up ahead. */
  commonWords(count: number): string[] {
    return this.words.common(count);
  }

  /** The `max` shortest of the catalog's words longer than `prefix` that start with it (then in string order). */
  completions(prefix: string, max: number): string[] {
    return this.words.complete(prefix, max);
  }

  /** The filter values the catalog has (search-warmup.ts): a few of each column. */
  filterValues(): { countries: string[]; languages: string[]; topics: string[] } {
    const few = (codes: Codes) => codes.values().slice(0, 4);
    return { countries: few(this.codes.country), languages: few(this.codes.language), topics: few(this.topicCodes) };
  }

  knows(term: string): boolean {
    const id = this.lexicon.id(term);
    return id !== undefined && this.terms.has(id) && WORD.test(term);
  }

  // FilterView: what the filters (search-filter.ts) read.
  valueBits(column: 'type' | 'country' | 'language' | 'topic', value: string): Uint32Array | undefined {
    const code = (column === 'topic' ? this.topicCodes : this.codes[column]).find(value);
    return code === undefined ? undefined : this.bitsets.get(`${column}:${code}`);
  }

  verifiedBits(on: boolean): Uint32Array {
    return this.bitset(`verified:${on ? 1 : 0}`);
  }

  offerBits(format: OfferFormat | 'any'): Uint32Array {
    return this.bitset(`price:${PRICE_INDEX[format]}`);
  }

  pricesOf(format: OfferFormat | 'any'): Float64Array {
    return this.prices[PRICE_INDEX[format]]!;
  }

  visitsBySlot(): Float64Array {
    return this.visitsOf;
  }

  priceSteps(format: OfferFormat | 'any', atMost: number): { among: Uint32Array | undefined; sure: Uint32Array | undefined } {
    const steps = this.priceStepBits[PRICE_INDEX[format]]!;
    const above = PRICE_STEPS.findIndex((step) => step >= atMost);
    const below = PRICE_STEPS.findLastIndex((step) => step <= atMost);
    return { among: above < 0 ? undefined : steps[above], sure: below < 0 ? undefined : steps[below] };
  }

  /** A slot-indexed scratch array, all zero between searches (the listed way's places). */
  places(): Int32Array {
    if (this.scratch.length < this.size) this.scratch = new Int32Array(this.capacity);
    return this.scratch;
  }

  // For the planner's query (search-words.ts), with the lists above: topics, figures.

  /** A topic's code (its posting list's key in `topics`), by its slug. */
  topicCode(slug: string): number | undefined {
    return this.topicCodes.find(slug);
  }

  /** What the planner's pre-rank reads of a slot. */
  figures(slot: number): OutletFigures {
    const orNull = (x: number) => (Number.isNaN(x) ? null : x);
    return {
      id: this.ids[slot]!,
      visits: this.visitsOf[slot]!,
      verified: this.verified[slot] === 1,
      onTime: orNull(this.onTime[slot]!),
      acceptance: orNull(this.acceptance[slot]!),
      rating: orNull(this.rating[slot]!),
    };
  }

  /** The bits of these outlets' current slots (lent: given back to `lender`). */
  slotsOfIds(ids: Iterable<number>): Uint32Array {
    const bits = this.lender.take((this.size + 31) >>> 5);
    for (const id of ids) {
      const s = (this.slotOf[id] ?? 0) - 1;
      if (s >= 0) bits[s >>> 5]! |= 1 << (s & 31);
    }
    return bits;
  }

  /** Outlets in the index (current versions) and slots in all. */
  get counts(): { live: number; slots: number } {
    return { live: this.size - this.dead, slots: this.size };
  }
}

/** The format whose cheapest offer a price order reads: the one asked for, else any. */
export function orderFormat(f: SearchFilter): OfferFormat | 'any' {
  return f.formats?.length === 1 ? f.formats[0]! : 'any';
}
