import type pg from 'pg';
import type { OfferFormat, OutletSort } from './enums.js';
import { SlotOrder } from './search-order.js';
import { SlotLists } from './search-postings.js';
import type { Vocabulary } from './search-terms.js';

// Which outlets a search finds, how many, and which of them are its page, without reading the
// matches in PostgreSQL: there, an exact count visits every matching row and a page in traffic
// order either walks the traffic index or sorts every match (a broad word at 1,000,000 outlets:
// 100–1,000 ms; the table does not fit PostgreSQL's stock shared buffers). This process keeps, per
// outlet, what a search tests: the lexemes of its search_vector and name_vector exactly as
// PostgreSQL made them (read with tsvector_to_array, so stemming and tokenising are PostgreSQL's),
// its exact name and domain (as hashes), and the filtered and sorted columns. A search is then a
// union of posting lists per word, their intersection and the filters as bitsets; its page the
// first matching slots of a slot order by traffic (or price), or its few matches sorted. Only the
// page's rows are then read from PostgreSQL, by id.
//
// It is loaded at start (the service is not ready until then) and kept current from PostgreSQL:
// a trigger on outlets sends the ids of the rows each statement wrote (NOTIFY outlets_changed),
// and this process reads those rows again.

/** The words of a count: each group must match (AND), through any of its lexemes. */
export interface CountQuery {
  exactName: string;
  domain: string | undefined;
  groups: { lexemes: string[] }[];
}

export interface CountFilters {
  type?: string | undefined;
  format?: OfferFormat | undefined;
  country?: string | undefined;
  language?: string | undefined;
  topic?: string | undefined;
  maxPriceCents?: number | undefined;
  verifiedTraffic?: boolean | undefined;
  minTraffic?: number | undefined;
}

const PRICE_INDEX: Record<OfferFormat | 'any', number> = { any: 0, guest_post: 1, sponsored_article: 2, link_insertion: 3, press_release: 4 };
const SEP = '\u001f';
const LOAD_BATCH = 20_000;
const MAX_RECENT = 2_000;

interface Row {
  id: number;
  name: string;
  domain: string;
  type: string;
  country: string;
  language: string;
  verified: boolean;
  visits: string;
  p0: string | null;
  p1: string | null;
  p2: string | null;
  p3: string | null;
  p4: string | null;
  topics: string;
  terms: string;
  name_terms: string;
}

/** Of an outlet's orders: links checked at or after 30 / 60 days from completion, and of those alive; first checks made and passed. */
interface CheckCounts {
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

const COLUMNS = `o.id, lower(o.name) AS name, o.domain, o.type::text AS type, o.country, o.language, o.traffic_verified AS verified,
  o.monthly_visits AS visits, o.min_price_any AS p0, o.min_price_guest_post AS p1, o.min_price_sponsored_article AS p2,
  o.min_price_link_insertion AS p3, o.min_price_press_release AS p4,
  array_to_string(o.topics, E'\\x1f') AS topics, array_to_string(tsvector_to_array(o.search_vector), E'\\x1f') AS terms,
  array_to_string(tsvector_to_array(o.name_vector), E'\\x1f') AS name_terms`;

/** CheckCounts over a set of orders. */
const CHECK_COUNTS = `count(alive_30d)::int AS n30, count(*) FILTER (WHERE alive_30d)::int AS a30,
  count(alive_60d)::int AS n60, count(*) FILTER (WHERE alive_60d)::int AS a60,
  count(first_check_passed)::int AS nv, count(*) FILTER (WHERE first_check_passed)::int AS pv`;

const NO_CHECKS: CheckCounts = { n30: 0, a30: 0, n60: 0, a60: 0, nv: 0, pv: 0 };

/** A search's total (meta.total) and the ids of its first outlets, in the sort's order. */
export interface Found {
  total: number;
  ids: number[];
}

/** How a tier's page is picked: `auto` by the cheaper; tests force each. */
export type PickWay = 'auto' | 'walk' | 'sort';

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
const nameKey = (name: string) => hash53(`n${SEP}${name}`);
const domainKey = (domain: string) => hash53(`d${SEP}${domain}`);

function bitCount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

function popcount(bits: Uint32Array): number {
  let n = 0;
  for (let i = 0; i < bits.length; i++) if (bits[i] !== 0) n += bitCount(bits[i]!);
  return n;
}

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
}

/** What a search matches, as bitsets over slots, filters applied. */
interface Matched {
  all: Uint32Array;
  exact: Uint32Array;
  inName: Uint32Array;
}

/** What search_terms holds: lexemes of letters only (not numbers, not domain labels with digits or hyphens). */
const WORD = /^\p{L}+$/u;

export class SearchCounter implements Vocabulary {
  /** An outlet's current slot + 1, by outlet id (0: none); a changed outlet gets a new slot and its old one dies. */
  private slotOf = new Int32Array(0);
  private size = 0;
  private capacity = 0;
  private ids = new Int32Array(0);
  private type = new Uint8Array(0);
  private country = new Uint16Array(0);
  private language = new Uint16Array(0);
  private verified = new Uint8Array(0);
  private visits = new Float64Array(0);
  private prices: Float64Array[] = [];
  private readonly codes = { type: new Codes(), country: new Codes(), language: new Codes() };
  /** Every lexeme once: its id indexes both posting lists (search_vector's and name_vector's). */
  private readonly lexicon = new Map<string, number>();
  private readonly terms = new SlotLists();
  private readonly nameTerms = new SlotLists();
  /** Topics, by their code. */
  private readonly topics = new SlotLists();
  private readonly topicCodes = new Codes();
  /** Lower-cased names and domains, by hash: the exact tier. */
  private readonly exacts = new SlotLists();
  /**
   * One bit per slot for each filter value (`type:<code>`, `country:<code>`, `language:<code>`,
   * `verified:<0|1>`), for being alive (`alive`) and for having an active offer of a format
   * (`price:<index>`): a search ANDs these word by word instead of testing each match.
   */
  private readonly bitsets = new Map<string, Uint32Array>();
  /** Most traffic first (then the highest id): relevance within a tier, `-traffic`, `traffic` read backwards. */
  private readonly byTraffic = new SlotOrder(
    (a, b) => this.visits[b]! - this.visits[a]! || this.ids[b]! - this.ids[a]!,
    (s) => this.alive(s),
  );
  /** Per format (PRICE_INDEX), cheapest first (then the lowest id): `price`, `-price` read backwards. */
  private readonly byPrice = [0, 1, 2, 3, 4].map(
    (i) =>
      new SlotOrder(
        (a, b) => this.prices[i]![a]! - this.prices[i]![b]! || this.ids[a]! - this.ids[b]!,
        (s) => this.alive(s) && !Number.isNaN(this.prices[i]![s]!),
      ),
  );
  /** Check results of the slots of outlets that have any (a dead slot's stay: an order may still compare it). */
  private readonly checks = new Map<number, Checks>();
  /**
   * The slots with links checked (bitset `survival`), best survival first: 30 days, then 60 (none
   * last), then more links checked, more traffic, the highest id. The matches without any follow
   * in traffic order.
   */
  private readonly bySurvival = new SlotOrder(
    (a, b) => {
      const x = this.checks.get(a)!;
      const y = this.checks.get(b)!;
      return y.s30 - x.s30 || y.s60 - x.s60 || y.n30 - x.n30 || y.n60 - x.n60 || this.byTraffic.before(a, b);
    },
    (s) => this.alive(s) && this.has('survival', s),
  );
  /** The slots with placements checked (bitset `verification`): best pass rate, then more checked, more traffic. */
  private readonly byVerification = new SlotOrder(
    (a, b) => {
      const x = this.checks.get(a)!;
      const y = this.checks.get(b)!;
      return y.verified - x.verified || y.nv - x.nv || this.byTraffic.before(a, b);
    },
    (s) => this.alive(s) && this.has('verification', s),
  );
  /** The words (WORD) of search_vector sorted, for completions; those added since, in `newWords`. */
  private words: string[] = [];
  private newWords: string[] = [];
  /** Recent searches and completions, valid until the next write. */
  private readonly recent = new Map<string, Found>();
  private readonly recentCompletions = new Map<string, string[]>();
  ready = false;

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
    this.visits = copy(this.visits, (n) => new Float64Array(n));
    this.prices = [0, 1, 2, 3, 4].map((i) => copy(this.prices[i] ?? new Float64Array(0), (n) => new Float64Array(n)));
    for (const [key, bits] of this.bitsets) {
      const wider = new Uint32Array((cap + 31) >>> 5);
      wider.set(bits);
      this.bitsets.set(key, wider);
    }
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

  private lexemeId(lexeme: string): number {
    let id = this.lexicon.get(lexeme);
    if (id === undefined) this.lexicon.set(lexeme, (id = this.lexicon.size));
    return id;
  }

  private put(r: Row, c: CheckCounts): void {
    this.recent.clear();
    this.recentCompletions.clear();
    if (r.id >= this.slotOf.length) {
      const wider = new Int32Array(Math.max(r.id + 1, this.slotOf.length * 2, 1024));
      wider.set(this.slotOf);
      this.slotOf = wider;
    }
    const old = this.slotOf[r.id]! - 1;
    if (old >= 0) this.flag('alive', old, false);
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
    this.visits[s] = Number(r.visits);
    this.byTraffic.add(s);
    [r.p0, r.p1, r.p2, r.p3, r.p4].forEach((p, i) => {
      this.prices[i]![s] = p === null ? NaN : Number(p);
      if (p !== null) {
        this.flag(`price:${i}`, s, true);
        this.byPrice[i]!.add(s);
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
    if (r.terms) {
      for (const t of r.terms.split(SEP)) {
        const id = this.lexemeId(t);
        if (this.ready && !this.terms.has(id) && WORD.test(t)) this.newWords.push(t);
        this.terms.add(id, s);
      }
    }
    if (r.name_terms) for (const t of r.name_terms.split(SEP)) this.nameTerms.add(this.lexemeId(t), s);
    if (r.topics) for (const t of r.topics.split(SEP)) this.topics.add(this.topicCodes.code(t), s);
    this.exacts.add(nameKey(r.name), s);
    this.exacts.add(domainKey(r.domain), s);
  }

  /**
   * Every outlet, read in batches by id. The check results of orders are read first, in one pass
   * over the orders that have any (one probe of orders_outlet_idx per outlet cost the load of
   * 100,000 outlets about half again); a check written meanwhile sends its outlet's id, read again
   * once loaded.
   */
  async load(pool: pg.Pool): Promise<void> {
    const checked = new Map<number, CheckCounts>();
    const { rows: counts } = await pool.query<CheckCounts & { id: number }>(
      `SELECT outlet_id AS id, ${CHECK_COUNTS} FROM orders
        WHERE alive_30d IS NOT NULL OR alive_60d IS NOT NULL OR first_check_passed IS NOT NULL GROUP BY outlet_id`,
    );
    for (const c of counts) checked.set(c.id, c);
    let last = 0;
    for (;;) {
      const { rows } = await pool.query<Row>({
        name: 'search_counter_load',
        text: `SELECT ${COLUMNS} FROM outlets o WHERE o.id > $1 ORDER BY o.id LIMIT ${LOAD_BATCH}`,
        values: [last],
      });
      for (const r of rows) this.put(r, checked.get(r.id) ?? NO_CHECKS);
      if (rows.length < LOAD_BATCH) break;
      last = rows.at(-1)!.id;
    }
    for (const o of [this.byTraffic, ...this.byPrice, this.bySurvival, this.byVerification]) o.settle();
    for (const lists of [this.terms, this.nameTerms, this.topics, this.exacts]) lists.pack();
    const inTerms = new Uint8Array(this.lexicon.size);
    this.terms.forEachKey((id) => (inTerms[id] = 1));
    const words: string[] = [];
    for (const [lexeme, id] of this.lexicon) if (inTerms[id] === 1 && WORD.test(lexeme)) words.push(lexeme);
    this.words = words.sort();
    this.ready = true;
  }

  knows(term: string): boolean {
    const id = this.lexicon.get(term);
    return id !== undefined && this.terms.has(id) && WORD.test(term);
  }

  completions(prefix: string, max: number): string[] {
    const key = `${max}:${prefix}`;
    let found = this.recentCompletions.get(key);
    if (!found) {
      // A short prefix starts thousands of the catalog's words (names run together in domains).
      found = this.completionsNow(prefix, max);
      if (this.recentCompletions.size >= MAX_RECENT) this.recentCompletions.delete(this.recentCompletions.keys().next().value!);
      this.recentCompletions.set(key, found);
    }
    return found;
  }

  private completionsNow(prefix: string, max: number): string[] {
    if (this.newWords.length > 1_024) {
      this.words = [...this.words, ...this.newWords].sort();
      this.newWords = [];
    }
    const words = this.words;
    let lo = 0;
    let hi = words.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (words[mid]! < prefix) lo = mid + 1;
      else hi = mid;
    }
    const found: string[] = [];
    for (let i = lo; i < words.length && words[i]!.startsWith(prefix); i++) if (words[i] !== prefix) found.push(words[i]!);
    for (const w of this.newWords) if (w.startsWith(prefix) && w !== prefix) found.push(w);
    return found.sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0)).slice(0, max);
  }

  /** Reads these outlets again (they were written). */
  async refresh(pool: pg.Pool, ids: number[]): Promise<void> {
    for (let i = 0; i < ids.length; i += LOAD_BATCH) {
      // With the check results of each outlet's orders (by orders_outlet_idx).
      const { rows } = await pool.query<Row & CheckCounts>({
        name: 'search_counter_refresh',
        text: `SELECT ${COLUMNS}, c.* FROM outlets o LEFT JOIN LATERAL (SELECT ${CHECK_COUNTS} FROM orders WHERE outlet_id = o.id) c ON true
                WHERE o.id = ANY($1::int[])`,
        values: [ids.slice(i, i + LOAD_BATCH)],
      });
      for (const r of rows) this.put(r, r);
    }
  }

  /** The words' matches as a bitset over slots: each group through any of its lexemes. */
  private matchBits(groups: CountQuery['groups'], terms: SlotLists): Uint32Array {
    const words = new Uint32Array((this.size + 31) >>> 5);
    let first = true;
    for (const g of groups) {
      const bits = first ? words : new Uint32Array(words.length);
      for (const lexeme of g.lexemes) {
        const id = this.lexicon.get(lexeme);
        if (id !== undefined) terms.setBits(bits, id);
      }
      if (!first) for (let i = 0; i < words.length; i++) words[i]! &= bits[i]!;
      first = false;
    }
    return words;
  }

  /**
   * The outlets matching the words (or the exact name or domain; every outlet without words) and
   * the filters. Undefined until loaded.
   */
  private match(q: CountQuery | undefined, f: CountFilters): Matched {
    const n = (this.size + 31) >>> 5;
    const all = q ? this.matchBits(q.groups, this.terms) : new Uint32Array(n).fill(0xffffffff);
    const inName = q && q.groups.length ? this.matchBits(q.groups, this.nameTerms) : new Uint32Array(n);
    const exact = new Uint32Array(n);
    if (q) {
      this.exacts.setBits(exact, nameKey(q.exactName));
      if (q.domain !== undefined) this.exacts.setBits(exact, domainKey(q.domain));
    }
    for (let i = 0; i < n; i++) all[i]! |= exact[i]! | inName[i]!;
    if (f.topic !== undefined) {
      const bits = new Uint32Array(n);
      const topic = this.topicCodes.find(f.topic);
      if (topic !== undefined) this.topics.setBits(bits, topic);
      for (let i = 0; i < n; i++) all[i]! &= bits[i]!;
    }
    const code = (codes: Codes, v: string | undefined) => (v === undefined ? -1 : (codes.find(v) ?? -2));
    const type = code(this.codes.type, f.type);
    const country = code(this.codes.country, f.country);
    const language = code(this.codes.language, f.language);
    if (type === -2 || country === -2 || language === -2) return { all: new Uint32Array(n), exact, inName };
    const and = (key: string) => {
      const bits = this.bitset(key);
      for (let i = 0; i < n; i++) all[i]! &= bits[i]!;
    };
    and('alive');
    if (type >= 0) and(`type:${type}`);
    if (country >= 0) and(`country:${country}`);
    if (language >= 0) and(`language:${language}`);
    if (f.verifiedTraffic !== undefined) and(`verified:${f.verifiedTraffic ? 1 : 0}`);
    const priceIndex = PRICE_INDEX[f.format ?? 'any'];
    and(`price:${priceIndex}`);
    // Price and traffic bounds are tested per match (only searches that have them pay for it).
    if (f.maxPriceCents !== undefined || f.minTraffic !== undefined) {
      const price = this.prices[priceIndex]!;
      const maxPrice = f.maxPriceCents ?? Infinity;
      const minTraffic = f.minTraffic ?? -Infinity;
      for (let w = 0; w < n; w++) {
        let bits = all[w]!;
        while (bits !== 0) {
          const low = bits & -bits;
          const s = (w << 5) + (31 - Math.clz32(low));
          bits ^= low;
          if (!(price[s]! <= maxPrice && this.visits[s]! >= minTraffic)) all[w]! &= ~low;
        }
      }
    }
    return { all, exact, inName };
  }

  /**
   * What a search finds: its total and the ids of its first `n` outlets in the sort's order. For
   * relevance, tiers best first (the exact name or domain; every word in the name or domain; the
   * rest), each by traffic. Undefined until loaded.
   */
  search(q: CountQuery | undefined, f: CountFilters, sort: OutletSort, n: number, way: PickWay = 'auto'): Found | undefined {
    if (!this.ready) return undefined;
    // The same search asked again: it stands until an outlet is written (put() forgets).
    const key = JSON.stringify([q, f.type, f.format, f.country, f.language, f.topic, f.maxPriceCents, f.verifiedTraffic, f.minTraffic, sort, n, way]);
    const hit = this.recent.get(key);
    if (hit) return hit;
    const found = this.searchNow(q, f, sort, n, way);
    if (this.recent.size >= MAX_RECENT) this.recent.delete(this.recent.keys().next().value!);
    this.recent.set(key, found);
    return found;
  }

  private searchNow(q: CountQuery | undefined, f: CountFilters, sort: OutletSort, n: number, way: PickWay): Found {
    const { all, exact, inName } = this.match(q, f);
    const total = popcount(all);
    const byPrice = sort === 'price' || sort === '-price';
    const order = byPrice ? this.byPrice[PRICE_INDEX[f.format ?? 'any']]! : this.byTraffic;
    const reverse = sort === 'traffic' || sort === '-price';
    let tiers: Uint32Array[] = [all];
    let orders = [order];
    if (sort === 'link_survival' || sort === 'verification') {
      // The matches with figures in their own order, then those without by traffic.
      const rated = this.bitset(sort === 'link_survival' ? 'survival' : 'verification');
      const figured = new Uint32Array(all.length);
      const rest = new Uint32Array(all.length);
      for (let i = 0; i < all.length; i++) {
        figured[i] = all[i]! & rated[i]!;
        rest[i] = all[i]! & ~rated[i]!;
      }
      tiers = [figured, rest];
      orders = [sort === 'link_survival' ? this.bySurvival : this.byVerification, this.byTraffic];
    } else if (sort === 'relevance' && q) {
      const named = new Uint32Array(all.length);
      const rest = new Uint32Array(all.length);
      for (let i = 0; i < all.length; i++) {
        const a = all[i]!;
        exact[i]! &= a;
        if (a === 0) continue;
        named[i] = a & inName[i]! & ~exact[i]!;
        rest[i] = a & ~inName[i]! & ~exact[i]!;
      }
      tiers = [exact, named, rest];
      orders = [order, order, order];
    }
    const slots: number[] = [];
    for (let t = 0; t < tiers.length; t++) {
      const bits = tiers[t]!;
      if (slots.length >= n) break;
      const size = bits === all ? total : popcount(bits);
      if (size === 0) continue;
      slots.push(...this.first(bits, size, Math.min(n - slots.length, size), orders[t]!, reverse, way));
    }
    return { total, ids: slots.map((s) => this.ids[s]!) };
  }

  /**
   * The first `m` of a tier's `size` matches in the order. Walking the order costs a bit test per
   * slot passed, about m × (slots in the order) / size of them; sorting the matches about size ×
   * log2(size) comparisons, each worth several bit tests: whichever is cheaper.
   */
  private first(bits: Uint32Array, size: number, m: number, order: SlotOrder, reverse: boolean, way: PickWay): number[] {
    const walk = (m * order.length) / size;
    const sort = size * Math.log2(size + 1) * 8;
    if (way === 'walk' || (way === 'auto' && walk <= sort)) return order.firstIn(bits, m, reverse).slots;
    const matches: number[] = [];
    for (let w = 0; w < bits.length; w++) {
      let b = bits[w]!;
      while (b !== 0) {
        const low = b & -b;
        matches.push((w << 5) + (31 - Math.clz32(low)));
        b ^= low;
      }
    }
    matches.sort(reverse ? (a, b) => order.before(b, a) : order.before);
    return matches.slice(0, m);
  }

  /** Forgets the remembered searches (benchmarks time a search the first time it is asked). */
  forget(): void {
    this.recent.clear();
  }

  /** Slots a walk would pass for this search's page (benchmarks and tests read how far a walk goes). */
  walked(q: CountQuery | undefined, f: CountFilters, n: number): number {
    const { all } = this.match(q, f);
    return this.byTraffic.firstIn(all, n, false).passed;
  }
}
