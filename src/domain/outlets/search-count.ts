import type pg from 'pg';

// meta.total of a search. An exact count costs work in proportion to the outlets its words match
// (a broad word over a big catalog: hundreds of milliseconds at 1M), however small the page, so
// each count is kept per statement (the filter shape with its values) and served while it is at
// most COUNT_MAX_AGE_MS old: exact as of at most that long ago (issue 18 allows 5 s). A request
// finding it older than COUNT_REFRESH_MS refreshes it in the background, so a query asked again
// and again waits for no count. A write to the catalog in this process forgets every count; on
// other processes they age out.

const COUNT_MAX_AGE_MS = 4_000;
const COUNT_REFRESH_MS = 2_000;
const MAX_ENTRIES = 5_000;

interface Entry {
  n: number;
  /** When the count's statement started: what it counted was there at least then. */
  at: number;
  refreshing: boolean;
}

const cache = new Map<string, Entry>();
/** Bumped by forgetCounts(): a count started before it is not stored. */
let generation = 0;

export interface Counting {
  /** The count when a recent one is at hand now (it tells the page how to read). */
  known: number | undefined;
  total: Promise<number>;
}

async function run(pool: pg.Pool, st: { name?: string; text: string; values: unknown[] }, key: string): Promise<number> {
  const at = Date.now();
  const gen = generation;
  const { rows } = await pool.query<{ n: number }>(st);
  const n = rows[0]!.n;
  if (gen === generation) {
    if (cache.size >= MAX_ENTRIES && !cache.has(key)) cache.delete(cache.keys().next().value!);
    // Re-inserted, so that the oldest entries are the first to go.
    cache.delete(key);
    cache.set(key, { n, at, refreshing: false });
  }
  return n;
}

export function countMatches(pool: pg.Pool, st: { name?: string; text: string; values: unknown[] }): Counting {
  const key = `${st.text}\u0000${JSON.stringify(st.values)}`;
  const hit = cache.get(key);
  const age = hit ? Date.now() - hit.at : Infinity;
  if (!hit || age > COUNT_MAX_AGE_MS) return { known: undefined, total: run(pool, st, key) };
  if (age > COUNT_REFRESH_MS && !hit.refreshing) {
    hit.refreshing = true;
    run(pool, st, key).catch(() => {
      hit.refreshing = false;
    });
  }
  return { known: hit.n, total: Promise.resolve(hit.n) };
}

/** After a write to the catalog: every count may have changed. */
export function forgetCounts(): void {
  generation++;
  cache.clear();
}
