import { LRUCache } from 'lru-cache';
import type pg from 'pg';
import { DomainError } from '../errors.js';
import { filterKey } from './search-filter.js';
import { SearchIndex, type TextQuery } from './search-index.js';
import { OutletQuery } from './search-query.js';
import { loadIndex, refreshIndex } from './search-loader.js';
import { OutletChangesListener } from './search-listener.js';
import { confirmPhrases, type Phrase } from './search-phrase.js';
import type { Found, SearchRequest } from './search-request.js';
import { lexemesOfWord, SearchTerms } from './search-terms.js';
import { type Ask, warmUp } from './search-warmup.js';
import { parseQuery } from './search-text.js';

// The one search engine of a process: its in-memory index answers every search (quoted phrases
// too, confirmed on the candidates' rows) and PostgreSQL then reads only the page's rows by id. It
// loads the index at start and answers a few hundred searches of its own over it (search-warmup.ts;
// searches answer 503 with Retry-After until then, and /readyz says not ready) and keeps it
// current through LISTEN outlets_changed on a connection of its own (search-listener.ts: outside
// the pool, so it never takes a request's connection). A lost connection starts it over.
//
// Slots are never rewritten in place (a written outlet takes a new one), so the index grows with
// writes; when the outlets written since the load are many (a quarter of the catalog), or one
// notification burst is a large share of it (a nightly traffic refresh of every row), the engine
// loads a fresh index beside the current one, which keeps answering, and swaps them: memory goes
// back to what a fresh start takes.

/** Seconds a client is asked to wait while the index loads. */
const RETRY_AFTER_S = 5;
/** A notification burst of more than this share of the catalog is read by loading afresh. */
const RELOAD_BURST_SHARE = 0.1;
/** Dead slots beyond this share of the live ones make the engine load afresh. */
const RELOAD_DEAD_SHARE = 0.25;
/** The catalog's most used words whose forms are read before the index answers (SearchTerms keeps 10,000). */
const COMMON_WORDS = 5_000;
/** Below this many outlets a reload is never worth it (tests, small catalogs). */
const RELOAD_MIN = 10_000;

export class SearchEngine {
  private index: SearchIndex | undefined;
  private readonly listener: OutletChangesListener;
  private stopped = false;
  private reloading = false;
  /** Outlet ids notified and not yet read. */
  private readonly pending = new Set<number>();
  private draining: Promise<void> | undefined;
  /** Callers of catchUp() waiting for the index to have read everything notified before their mark. */
  private readonly marks = new Map<string, () => void>();
  private readonly drained: (() => void)[] = [];
  private markCount = 0;
  private loadCount = 0;
  /**
   * Set while a reload for a burst is under way: the mark sent before it. Ids notified before the
   * mark arrives were committed before it, so the reload (whose reads all begin after the mark's
   * commit) reads them: they are not read again.
   */
  private coveredUntil: string | undefined;
  /**
   * Pages and totals, remembered with the index version they were found at; reused while no write
   * since could have changed them (SearchIndex.unchangedSince: no written outlet matches them).
   */
  private readonly remembered = new LRUCache<string, Remembered>({ max: 2_000 });

  /** The catalog's words as PostgreSQL holds them, for a word the index does not know (and the planner). */
  readonly terms: SearchTerms;

  /** Resolves once the first index is in and searches answer (never, if the engine stops first). */
  readonly loadedOnce: Promise<void>;
  private markLoaded!: () => void;

  /**
   * `warm`: what is done with a loaded index before it answers (search-warmup.ts), given a way to
   * ask it searches as a client's are asked; tests hold it to see that nothing answers until it is
   * done.
   */
  constructor(
    private readonly pool: pg.Pool,
    private readonly onError: (err: Error, what: string) => void = () => {},
    private readonly warm: (index: SearchIndex, ask: Ask) => Promise<void> = warmUp,
  ) {
    this.terms = new SearchTerms(pool);
    this.loadedOnce = new Promise((resolve) => (this.markLoaded = resolve));
    this.listener = new OutletChangesListener(pool, {
      payload: (payload) => this.notified(payload),
      starting: () => (this.coveredUntil = undefined),
      connected: () => this.load(),
      lost: (err) => this.onError(err, 'search index: reloading'),
    });
  }

  /** Whether searches can be answered (the index is loaded). */
  get ready(): boolean {
    return this.index !== undefined;
  }

  /** How many indexes were loaded and swapped in, the first included (a reload shows here). */
  get loads(): number {
    return this.loadCount;
  }

  /** The loaded index (tests and benchmarks read its counts). */
  get loaded(): SearchIndex | undefined {
    return this.index;
  }

  start(): void {
    this.listener.start();
  }

  async close(): Promise<void> {
    this.stopped = true;
    await this.listener.close();
    await this.draining;
  }

  /** The loaded index; while it loads, an `unavailable` error (503 with Retry-After). */
  current(): SearchIndex {
    if (!this.index) {
      throw new DomainError('unavailable', 'Search is starting up (its index is loading). Retry shortly.', { retry_after: RETRY_AFTER_S });
    }
    return this.index;
  }

  async search(req: SearchRequest): Promise<Found> {
    const index = this.current();
    const n = req.offset + req.limit;
    const key = JSON.stringify([req.q ?? null, filterKey(req.filter), req.sort, n]);
    const hit = this.remembered.get(key);
    if (hit && hit.index === index && index.unchangedSince(hit.version, hit.query, req.filter)) {
      hit.version = index.version;
      return page(hit.found, req.offset);
    }
    const version = index.version;
    const { found, query } = await this.find(index, req, n);
    // Remembered only if nothing was written meanwhile (the words' lookups and a phrase's check
    // wait for PostgreSQL).
    if (index.version === version && query !== null) this.remembered.set(key, { index, version, query, found });
    return page(found, req.offset);
  }

  /** The search's page and total, and the words it was matched with (null: none, no outlet matches). */
  private async find(index: SearchIndex, req: SearchRequest, n: number): Promise<{ found: Found; query: TextQuery | undefined | null }> {
    if (!req.q) return { found: pick(new OutletQuery(index, undefined, req.filter), req, false, n), query: undefined };
    const text = await this.textQuery(index, req.q);
    if (!text) return { found: { total: 0, ids: [] }, query: null };
    const query = new OutletQuery(index, text.query, req.filter);
    if (text.phrases.length) await this.confirm(query, text.phrases);
    return { found: pick(query, req, true, n), query: text.query };
  }

  /**
   * The query's words as the index reads them: each word as typed or its English stem, the last
   * one also completed (at most 20 catalog words starting with it), a word the catalog does not
   * use through its nearest terms (typos). Undefined when the text has nothing to search for.
   */
  private async textQuery(index: SearchIndex, q: string): Promise<{ query: TextQuery; phrases: Phrase[] } | undefined> {
    const parsed = parseQuery(q);
    const words = parsed.words;
    if (words.length === 0 && !parsed.domain) return undefined;
    const last = words.at(-1);
    const [terms, completions] = await Promise.all([
      this.terms.lookup(words.map((w) => w.text), index),
      parsed.prefixLast && last && last.text.length >= 3 ? this.terms.completions(last.text, index) : Promise.resolve([]),
    ]);
    const groups = words.map((_, i) => ({
      lexemes: [...new Set([...lexemesOfWord(terms[i]!), ...(i === words.length - 1 ? completions : [])])],
    }));
    const phrases = new Map<number, Phrase>();
    words.forEach((w, i) => {
      if (w.phrase === undefined) return;
      if (!phrases.has(w.phrase)) phrases.set(w.phrase, []);
      phrases.get(w.phrase)!.push(groups[i]!.lexemes);
    });
    return { query: { exactName: parsed.exactName, domain: parsed.domain, groups }, phrases: [...phrases.values()] };
  }

  /** Keeps the matches in which every phrase appears as written (and in the name tier, in the name). */
  private async confirm(query: OutletQuery, phrases: Phrase[]): Promise<void> {
    const confirmed = await confirmPhrases(this.pool, query.phraseCandidates(), phrases);
    query.confirm(confirmed.anywhere, confirmed.inName);
  }

  /**
   * Resolves once every outlet write committed before the call is in this index: a mark sent on
   * the channel now arrives after their notifications (PostgreSQL delivers them in commit order).
   * For a caller that has just written outlets and must see them (an import's own report, tests);
   * a search never waits for it.
   */
  async catchUp(): Promise<void> {
    for (let i = 0; !this.index; i++) {
      if (this.stopped) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    const mark = `mark:${process.pid}:${++this.markCount}`;
    const seen = new Promise<void>((resolve) => this.marks.set(mark, resolve));
    await this.pool.query('SELECT pg_notify($1, $2)', ['outlets_changed', mark]);
    await seen;
  }

  private afterDrain(done: () => void): void {
    if (!this.draining && !this.reloading && this.pending.size === 0) done();
    else this.drained.push(done);
  }

  // --- keeping the index current -------------------------------------------------------------

  /** A notification: outlet ids to read again, or a mark (catchUp's, or the one a burst's reload waits for). */
  private notified(payload: string): void {
    if (payload === this.coveredUntil) {
      this.coveredUntil = undefined;
      return;
    }
    const mark = this.marks.get(payload);
    if (mark) {
      this.marks.delete(payload);
      this.afterDrain(mark);
      return;
    }
    // Another process's mark.
    if (payload.startsWith('mark:')) return;
    if (this.coveredUntil) return;
    for (const id of payload.split(',')) this.pending.add(Number(id));
    this.drain();
  }

  /** Loads a fresh index (the current one, if any, answers meanwhile) and swaps it in. */
  private async load(): Promise<void> {
    this.reloading = true;
    try {
      const fresh = new SearchIndex();
      await loadIndex(this.pool, fresh);
      if (this.stopped) return;
      // The forms (the word and its stem) of the catalog's most used words, read in one statement:
      // otherwise each of the first searches waits for PostgreSQL to give its words' forms.
      await this.terms.lookup(fresh.commonWords(COMMON_WORDS)).catch((err: Error) => this.onError(err, 'search: reading the common words ahead'));
      if (this.stopped) return;
      // Its first searches are answered here, not by the first clients (search-warmup.ts), on the
      // path a client's search takes from its text to its page.
      await this.warm(fresh, async (req) => (await this.find(fresh, req, req.offset + req.limit)).found);
      if (this.stopped) return;
      this.index = fresh;
      this.loadCount++;
      this.markLoaded();
      // What was remembered holds the old index: forgetting it lets the old index go.
      this.remembered.clear();
    } finally {
      this.reloading = false;
    }
    this.drain();
    if (!this.draining) for (const done of this.drained.splice(0)) done();
  }

  private drain(): void {
    if (!this.index || this.reloading || this.stopped) return;
    this.draining ??= (async () => {
      while (this.pending.size && this.index && !this.stopped && !this.reloading) {
        const index = this.index;
        const { live } = index.counts;
        if (live >= RELOAD_MIN && this.pending.size > live * RELOAD_BURST_SHARE) {
          // Most of the catalog was written: loading it afresh reads each row once and leaves
          // no dead slots behind. The rest of the burst, still arriving, is in the load too: its
          // ids are dropped until a mark sent now comes back (notifications arrive in commit
          // order). Ids notified after the mark are read after the load. Without the mark, a
          // refresh of every outlet arriving over a load's half minute loaded everything twice.
          this.pending.clear();
          const mark = `mark:${process.pid}:${++this.markCount}`;
          this.coveredUntil = mark;
          try {
            await this.pool.query('SELECT pg_notify($1, $2)', ['outlets_changed', mark]);
            await this.load();
          } catch (err) {
            // The burst's ids are gone and later ones were dropped: start over, as a lost connection does.
            this.coveredUntil = undefined;
            this.listener.restart(err as Error);
            return;
          }
          continue;
        }
        const ids = [...this.pending];
        this.pending.clear();
        await refreshIndex(this.pool, index, ids);
        if (live >= RELOAD_MIN && index.dead > live * RELOAD_DEAD_SHARE) await this.load();
      }
    })()
      .catch((err: Error) => this.onError(err, 'search index: reading written outlets failed'))
      .finally(() => {
        this.draining = undefined;
        if (this.pending.size && !this.reloading) this.drain();
        else if (!this.reloading) for (const done of this.drained.splice(0)) done();
      });
  }
}

/** The page and total of the matches, whose bitsets then go back to the index (see `release`). */
function pick(query: OutletQuery, req: SearchRequest, text: boolean, n: number): Found {
  const found = { total: query.total(), ids: query.page(req.sort, text, n) };
  query.release();
  return found;
}

/** A remembered search: the index and version it was found at, the words it was matched with. */
interface Remembered {
  index: SearchIndex;
  version: number;
  query: TextQuery | undefined;
  found: Found;
}

const page = (found: Found, offset: number): Found => ({ total: found.total, ids: found.ids.slice(offset) });
