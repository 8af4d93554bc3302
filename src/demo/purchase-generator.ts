import type pg from 'pg';
import { withTransaction } from '../db/handle.js';
import { notFound } from '../domain/errors.js';

// Small enough that one batch ends well within the statement timeout on a busy machine (100,000
// rows took 14 s of a 15 s limit under load), large enough that the statements' own cost is noise.
const GENERATE_BATCH = 10_000;

/**
 * Bulk purchases of one item for load tests: generate_series in batches of 10,000 rows, all in
 * one transaction (all or nothing). Codes are always random (gen_random_uuid, v4): a seed must
 * never make codes guessable. The seed makes everything else repeatable: license (1 in 10
 * extended), support (none, 6 or 12 months, some already over), downloaded (about 6 in 10) and a
 * purchase date within the last two years, all derived from hashint8extended(row, seed).
 */
export async function generatePurchases(
  pool: pg.Pool,
  input: { itemId: number; count: number; seed: number },
  /** Called with the number of purchases written after each batch. */
  onProgress?: (written: number) => void,
): Promise<{ generated: number }> {
  return withTransaction(pool, async (client) => {
    const found = await client.query('SELECT 1 FROM items WHERE id = $1', [input.itemId]);
    if (!found.rowCount) throw notFound('Item');
    let generated = 0;
    for (let start = 1; start <= input.count; start += GENERATE_BATCH) {
      const end = Math.min(input.count, start + GENERATE_BATCH - 1);
      const r = await client.query(
        `INSERT INTO purchases (code, item_id, workspace_id, license, price_cents, currency, supported_until, downloaded, purchased_at)
         SELECT gen_random_uuid(), i.id, i.workspace_id,
           CASE WHEN h.l < 10 THEN 'extended'::license_type ELSE 'regular'::license_type END,
           CASE WHEN h.l < 10 THEN i.price_extended_cents ELSE i.price_regular_cents END,
           i.currency,
           CASE WHEN h.s < 20 THEN NULL ELSE h.at + make_interval(months => CASE WHEN h.s < 60 THEN 6 ELSE 12 END) END,
           h.d < 60,
           h.at
         FROM items i,
           LATERAL (SELECT g,
             abs(hashint8extended(g, $4) % 100) AS l,
             abs(hashint8extended(g, $4 + 1) % 100) AS s,
             abs(hashint8extended(g, $4 + 2) % 100) AS d,
             date_trunc('second', now()) - make_interval(secs => abs(hashint8extended(g, $4 + 3) % 63072000)::double precision) AS at
           FROM generate_series($2::bigint, $3::bigint) AS g) AS h
         WHERE i.id = $1`,
        [input.itemId, start, end, input.seed],
      );
      generated += r.rowCount ?? 0;
      onProgress?.(r.rowCount ?? 0);
    }
    return { generated };
  });
}
