import type pg from 'pg';
import type { OfferFormat } from './enums.js';

// meta.total without reading the matches in PostgreSQL. An exact count there costs a visit to
// every matching row (a broad word at 1,000,000 outlets: 100–1,000 ms; the table does not fit
// PostgreSQL's stock shared buffers), however small the page. This process keeps, per outlet,
// what a count tests: the lexemes of its search_vector exactly as PostgreSQL made them (read with
// tsvector_to_array, so stemming and tokenising are PostgreSQL's), its exact name and domain, and
// the filtered columns. A count is then a union of posting lists per word, their intersection and
// a test of the filters per remaining outlet: a few milliseconds at 1M.
//
// It is loaded at start (the service is not ready until then) and kept current from PostgreSQL:
// a trigger on outlets sends the ids of the rows each statement wrote (NOTIFY outlets_changed),
// and this process reads those rows again. The page itself is always read from PostgreSQL.

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

const COLUMNS = `o.id, lower(o.name) AS name, o.domain, o.type::text AS type, o.country, o.language, o.traffic_verified AS verified,
  o.monthly_visits AS visits, o.min_price_any AS p0, o.min_price_guest_post AS p1, o.min_price_sponsored_article AS p2,
  o.min_price_link_insertion AS p3, o.min_price_press_release AS p4,
  array_to_string(o.topics, E'\\x1f') AS topics, array_to_string(tsvector_to_array(o.search_vector), E'\\x1f') AS terms,
  array_to_string(tsvector_to_array(o.name_vector), E'\\x1f') AS name_terms`;

export interface TierCounts {
  /** Everything the search finds (meta.total). */
  total: number;
  /** Of which by exact name or domain. */
  exact: number;
  /** Of which, besides those, with every word in the name or domain. */
  name: number;
  /** Outlets within the indexed filters (country, type, language, verified): what a walk in traffic order passes over. */
  region: number;
  /** Outlets in the catalog: what a walk in price order passes over. */
  catalog: number;
  /**
   * Before the filters: outlets with every word in the name or domain, and with every word only
   * elsewhere. What reading a tier from its word index costs (the filters are tested per match).
   */
  nameWords: number;
  otherWords: number;
}

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

function setBits(bits: Uint32Array, p: Postings): void {
  for (let i = 0; i < p.length; i++) {
    const s = p.items[i]!;
    bits[s >>> 5]! |= 1 << (s & 31);
  }
}

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

export class SearchCounter {
  /** An outlet's current slot; a changed outlet gets a new slot and its old one dies. */
  private readonly slotOf = new Map<number, number>();
  private size = 0;
  private capacity = 0;
  private alive = new Uint8Array(0);
  private type = new Uint8Array(0);
  private country = new Uint16Array(0);
  private language = new Uint16Array(0);
  private verified = new Uint8Array(0);
  private visits = new Float64Array(0);
  private prices: Float64Array[] = [];
  private readonly codes = { type: new Codes(), country: new Codes(), language: new Codes() };
  private readonly terms = new Map<string, Postings>();
  private readonly nameTerms = new Map<string, Postings>();
  private readonly topics = new Map<string, Postings>();
  private readonly names = new Map<string, Postings>();
  private readonly domains = new Map<string, number>();
  /**
   * One bit per slot for each filter value (`type:<code>`, `country:<code>`, `language:<code>`,
   * `verified:<0|1>`), for being alive (`alive`) and for having an active offer of a format
   * (`price:<index>`): a count ANDs these word by word instead of testing each match.
   */
  private readonly bitsets = new Map<string, Uint32Array>();
  /** Counts of recent queries, valid until the next write. */
  private readonly recent = new Map<string, TierCounts>();
  ready = false;

  private grow(min: number): void {
    if (min <= this.capacity) return;
    const cap = Math.max(min, this.capacity * 2, 1024);
    const copy = <T extends Uint8Array | Uint16Array | Float64Array>(a: T, make: (n: number) => T): T => {
      const b = make(cap);
      b.set(a);
      return b;
    };
    this.alive = copy(this.alive, (n) => new Uint8Array(n));
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

  private post(map: Map<string, Postings>, key: string, slot: number): boolean {
    let p = map.get(key);
    const fresh = p === undefined;
    if (!p) map.set(key, (p = new Postings()));
    p.push(slot);
    return fresh;
  }

  private put(r: Row): void {
    this.recent.clear();
    const old = this.slotOf.get(r.id);
    if (old !== undefined) {
      this.alive[old] = 0;
      this.flag('alive', old, false);
    }
    const s = this.size++;
    this.grow(this.size);
    this.slotOf.set(r.id, s);
    this.alive[s] = 1;
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
    [r.p0, r.p1, r.p2, r.p3, r.p4].forEach((p, i) => {
      this.prices[i]![s] = p === null ? NaN : Number(p);
      if (p !== null) this.flag(`price:${i}`, s, true);
    });
    if (r.terms) for (const t of r.terms.split(SEP)) this.post(this.terms, t, s);
    if (r.name_terms) for (const t of r.name_terms.split(SEP)) this.post(this.nameTerms, t, s);
    if (r.topics) for (const t of r.topics.split(SEP)) this.post(this.topics, t, s);
    this.post(this.names, r.name, s);
    this.domains.set(r.domain, s);
  }

  /** Every outlet, read in batches by id. */
  async load(pool: pg.Pool): Promise<void> {
    let last = 0;
    for (;;) {
      const { rows } = await pool.query<Row>({
        name: 'search_counter_load',
        text: `SELECT ${COLUMNS} FROM outlets o WHERE o.id > $1 ORDER BY o.id LIMIT ${LOAD_BATCH}`,
        values: [last],
      });
      for (const r of rows) this.put(r);
      if (rows.length < LOAD_BATCH) break;
      last = rows.at(-1)!.id;
    }
    this.ready = true;
  }

  /** Reads these outlets again (they were written). */
  async refresh(pool: pg.Pool, ids: number[]): Promise<void> {
    for (let i = 0; i < ids.length; i += LOAD_BATCH) {
      const { rows } = await pool.query<Row>({
        name: 'search_counter_refresh',
        text: `SELECT ${COLUMNS} FROM outlets o WHERE o.id = ANY($1::int[])`,
        values: [ids.slice(i, i + LOAD_BATCH)],
      });
      for (const r of rows) this.put(r);
    }
  }

  /** The words' matches as a bitset over slots: each group through any of its lexemes or prefixes. */
  private matchBits(groups: CountQuery['groups'], terms: Map<string, Postings>): Uint32Array {
    const words = new Uint32Array((this.size + 31) >>> 5);
    let first = true;
    for (const g of groups) {
      const bits = first ? words : new Uint32Array(words.length);
      for (const lexeme of g.lexemes) {
        const p = terms.get(lexeme);
        if (p) setBits(bits, p);
      }
      if (!first) for (let i = 0; i < words.length; i++) words[i]! &= bits[i]!;
      first = false;
    }
    return words;
  }

  /**
   * The outlets matching the words (or the exact name or domain) and the filters, in total and per
   * tier of the search (exact name or domain; every word in the name or domain; the rest), and the
   * number of outlets a walk in traffic order would pass over (those within the indexed filters).
   * Undefined until loaded.
   */
  count(q: CountQuery | undefined, f: CountFilters): TierCounts | undefined {
    if (!this.ready) return undefined;
    // The same query asked again: its counts stand until an outlet is written (put() forgets).
    const key = JSON.stringify([q, f.type, f.format, f.country, f.language, f.topic, f.maxPriceCents, f.verifiedTraffic, f.minTraffic]);
    const hit = this.recent.get(key);
    if (hit) return hit;
    const counts = this.countNow(q, f);
    if (this.recent.size >= MAX_RECENT) this.recent.delete(this.recent.keys().next().value!);
    this.recent.set(key, counts);
    return counts;
  }

  private countNow(q: CountQuery | undefined, f: CountFilters): TierCounts {
    const n = (this.size + 31) >>> 5;
    const all = q ? this.matchBits(q.groups, this.terms) : new Uint32Array(n).fill(0xffffffff);
    const inName = q && q.groups.length ? this.matchBits(q.groups, this.nameTerms) : new Uint32Array(n);
    const exact = new Uint32Array(n);
    const named = q && this.names.get(q.exactName);
    if (named) setBits(exact, named);
    const byDomain = q?.domain === undefined ? undefined : this.domains.get(q.domain);
    if (byDomain !== undefined) exact[byDomain >>> 5]! |= 1 << (byDomain & 31);
    for (let i = 0; i < n; i++) all[i]! |= exact[i]! | inName[i]!;
    const alive = this.bitset('alive');
    let nameWords = 0;
    let anyWords = 0;
    for (let i = 0; i < n; i++) {
      if (all[i] === 0) continue;
      anyWords += bitCount(all[i]! & alive[i]!);
      nameWords += bitCount(inName[i]! & alive[i]!);
    }
    if (f.topic !== undefined) {
      const bits = new Uint32Array(n);
      const p = this.topics.get(f.topic);
      if (p) setBits(bits, p);
      for (let i = 0; i < n; i++) all[i]! &= bits[i]!;
    }
    const code = (codes: Codes, v: string | undefined) => (v === undefined ? -1 : (codes.find(v) ?? -2));
    const type = code(this.codes.type, f.type);
    const country = code(this.codes.country, f.country);
    const language = code(this.codes.language, f.language);
    const catalog = this.slotOf.size;
    const words = { nameWords, otherWords: anyWords - nameWords };
    if (type === -2 || country === -2 || language === -2) return { total: 0, exact: 0, name: 0, region: 0, catalog, ...words };
    // The indexed filters as one mask (what a walk in traffic order passes over), then the
    // active offer of the format: word by word.
    const region = this.bitset('alive').slice(0, n);
    const and = (key: string) => {
      const bits = this.bitset(key);
      for (let i = 0; i < n; i++) region[i]! &= bits[i]!;
    };
    if (type >= 0) and(`type:${type}`);
    if (country >= 0) and(`country:${country}`);
    if (language >= 0) and(`language:${language}`);
    if (f.verifiedTraffic !== undefined) and(`verified:${f.verifiedTraffic ? 1 : 0}`);
    const regionSize = popcount(region);
    const priceIndex = PRICE_INDEX[f.format ?? 'any'];
    const listed = this.bitset(`price:${priceIndex}`);
    for (let i = 0; i < n; i++) all[i]! &= region[i]! & listed[i]!;
    // Price and traffic bounds are tested per match (only queries that have them pay for it).
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
    let total = 0;
    let exactCount = 0;
    let name = 0;
    for (let i = 0; i < n; i++) {
      const a = all[i]!;
      if (a === 0) continue;
      total += bitCount(a);
      exactCount += bitCount(a & exact[i]!);
      name += bitCount(a & inName[i]! & ~exact[i]!);
    }
    return { total, exact: exactCount, name, region: regionSize, catalog, ...words };
  }
}
