import type { Db } from '../../db/handle.js';
import type { CheckCounts, IndexRow, SearchIndex } from './search-index.js';

// The SQL that fills the search index (search-index.ts): every outlet at the load, in batches by
// id, and the outlets a notification names once they were written. Lexemes are read with
// tsvector_to_array, so stemming and tokenising stay PostgreSQL's.

const LOAD_BATCH = 20_000;

// The prices are bigint columns: read as float8, they arrive as numbers whatever pool reads them
// (a pool without the app's bigint parser, as the benchmarks' tools made, handed strings to
// SearchIndex.put, which V8 then deoptimized about once in five outlets).
const COLUMNS = `o.id, lower(o.name) AS name, o.domain, o.type::text AS type, o.country, o.language, o.traffic_verified AS verified,
  o.monthly_visits AS visits, o.min_price_any::float8 AS p0, o.min_price_guest_post::float8 AS p1,
  o.min_price_sponsored_article::float8 AS p2, o.min_price_link_insertion::float8 AS p3, o.min_price_press_release::float8 AS p4,
  array_to_string(o.topics, E'\\x1f') AS topics, array_to_string(tsvector_to_array(o.search_vector), E'\\x1f') AS terms,
  array_to_string(tsvector_to_array(o.name_vector), E'\\x1f') AS name_terms,
  array_to_string(tsvector_to_array(ts_filter(o.search_vector, '{b}')), E'\\x1f') AS topic_terms,
  o.base_on_time_rate AS on_time, o.base_acceptance_rate AS acceptance, o.base_rating AS rating`;

/** CheckCounts over a set of orders. */
const CHECK_COUNTS = `count(alive_30d)::int AS n30, count(*) FILTER (WHERE alive_30d)::int AS a30,
  count(alive_60d)::int AS n60, count(*) FILTER (WHERE alive_60d)::int AS a60,
  count(first_check_passed)::int AS nv, count(*) FILTER (WHERE first_check_passed)::int AS pv`;

const NO_CHECKS: CheckCounts = { n30: 0, a30: 0, n60: 0, a60: 0, nv: 0, pv: 0 };

/**
 * Every outlet into a new index, read in batches by id. The check results of orders are read
 * first, in one pass over the orders that have any (one probe of orders_outlet_idx per outlet cost
 * the load of 100,000 outlets about half again); a check written meanwhile sends its outlet's id,
 * read again once loaded.
 */
export async function loadIndex(pool: Db, index: SearchIndex): Promise<void> {
  const checked = new Map<number, CheckCounts>();
  const { rows: counts } = await pool.query<CheckCounts & { id: number }>(
    `SELECT outlet_id AS id, ${CHECK_COUNTS} FROM orders
      WHERE alive_30d IS NOT NULL OR alive_60d IS NOT NULL OR first_check_passed IS NOT NULL GROUP BY outlet_id`,
  );
  for (const c of counts) checked.set(c.id, c);
  let last = 0;
  for (;;) {
    const { rows } = await pool.query<IndexRow>({
      name: 'search_counter_load',
      text: `SELECT ${COLUMNS} FROM outlets o WHERE o.id > $1 ORDER BY o.id LIMIT ${LOAD_BATCH}`,
      values: [last],
    });
    await yielding(rows, (r) => index.put(r, checked.get(r.id) ?? NO_CHECKS));
    if (rows.length < LOAD_BATCH) break;
    last = rows.at(-1)!.id;
  }
  // Sorted and packed in pieces, the loop given back between them (issue 56): in one piece this
  // held it up for seconds at 1M outlets, which on a reload stalled the index in use.
  await index.settle(() => new Promise<void>((r) => setImmediate(r)));
}

/** Reads these outlets again into the index (they were written). */
export async function refreshIndex(pool: Db, index: SearchIndex, ids: number[]): Promise<void> {
  for (let i = 0; i < ids.length; i += LOAD_BATCH) {
    // With the check results of each outlet's orders (by orders_outlet_idx).
    const { rows } = await pool.query<IndexRow & CheckCounts>({
      name: 'search_counter_refresh',
      text: `SELECT ${COLUMNS}, c.* FROM outlets o LEFT JOIN LATERAL (SELECT ${CHECK_COUNTS} FROM orders WHERE outlet_id = o.id) c ON true
              WHERE o.id = ANY($1::int[])`,
      values: [ids.slice(i, i + LOAD_BATCH)],
    });
    await yielding(rows, (r) => index.put(r, r));
  }
}

/**
 * Calls `fn` on every row, letting other work run between slices: a load or a large refresh
 * reads batches of 20,000 rows, which would otherwise hold searches up for the whole batch.
 */
async function yielding<T>(rows: T[], fn: (row: T) => void): Promise<void> {
  for (let i = 0; i < rows.length; i += 1_000) {
    if (i > 0) await new Promise((r) => setImmediate(r));
    for (const row of rows.slice(i, i + 1_000)) fn(row);
  }
}
