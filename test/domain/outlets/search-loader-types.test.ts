import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { CheckCounts, IndexRow } from '../../../src/domain/outlets/search-index.js';
import { SearchIndex } from '../../../src/domain/outlets/search-index.js';
import { loadIndex, refreshIndex } from '../../../src/domain/outlets/search-loader.js';
import { publisherWithOutlet } from '../../helpers/catalog.js';
import { createTestDatabase } from '../../helpers/db.js';

// The search index reads every figure as a number. The prices are bigint columns, which `pg` hands
// over as strings unless a parser says otherwise: the app installs one for its pools, a
// benchmark's own pool had none, and SearchIndex.put, handed strings, was deoptimized by V8 about
// once in five outlets (a load of 100,000 outlets: 20,329 times). The loader asks for numbers
// itself, so no pool's parsers matter.

const database = await createTestDatabase();
afterAll(() => database.drop());

/** A pool with `pg`'s own parsers, bigint as text (its default), not the app's. */
const rawPool = () =>
  new pg.Pool({
    connectionString: database.url,
    max: 1,
    types: { getTypeParser: (oid: number, format?: 'text' | 'binary') => (oid === pg.types.builtins.INT8 ? (value: string) => value : pg.types.getTypeParser(oid, format)) },
  });

class Recording extends SearchIndex {
  readonly rows: IndexRow[] = [];
  override put(r: IndexRow, c: CheckCounts): void {
    this.rows.push(r);
    super.put(r, c);
  }
}

describe('the search loader', () => {
  it('hands the index its prices as numbers through a pool without parsers, loading and refreshing', async () => {
    const { outletId } = await publisherWithOutlet(database, [{ format: 'guest_post', publisher_price_cents: 12_345 }]);
    const pool = rawPool();
    try {
      const index = new Recording();
      await loadIndex(pool, index);
      await refreshIndex(pool, index, [outletId]);
      expect(index.rows).toHaveLength(2);
      for (const r of index.rows) {
        expect(typeof r.p0, 'min_price_any').toBe('number');
        expect(typeof r.p1, 'min_price_guest_post').toBe('number');
        expect(r.p1).toBe(r.p0);
        expect(r.p2).toBeNull();
      }
    } finally {
      await pool.end();
    }
  });
});
