import type pg from 'pg';
import { offerFormats } from './enums.js';
import { hydrateStatement } from './search.js';
import { termsStatement } from './search-terms.js';

// The first searches after a start each waited for a connection of their own to be opened (a new
// PostgreSQL backend, its catalog read afresh) and for their statements to be parsed on it: the
// pool opens connections only when a request needs one. So, before the first index is used, every
// connection the pool may hold is opened at once and sends the statements a search sends (the
// page's rows in each price format, a word's lookup), as a request would. They stay open while
// used (the pool closes a connection idle for 30 s).

/** A word any catalog may or may not hold: its lookup runs either way. */
const SAMPLE_WORDS = ['news', 'travel'];

/** Opens each of the pool's connections and sends a search's statements on it. */
export async function warmConnections(pool: pg.Pool): Promise<void> {
  const max = pool.options.max ?? 10;
  const { rows } = await pool.query<{ id: number }>('SELECT id FROM outlets ORDER BY id LIMIT 25');
  const ids = rows.map((r) => r.id);
  // Held all together, so the pool must open `max` of them rather than reuse one. A connection
  // the pool cannot give in time (others busy) is skipped; those it gave always go back.
  const settled = await Promise.allSettled(Array.from({ length: max }, () => pool.connect()));
  const clients = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  try {
    await Promise.all(
      clients.map(async (client) => {
        await client.query(termsStatement(SAMPLE_WORDS));
        // Workspace 0 does not exist: the statement is planned and run, and returns no rows.
        for (const format of ['any', ...offerFormats] as const) await client.query(hydrateStatement(ids, format, 0));
      }),
    );
  } finally {
    for (const c of clients) c.release();
  }
}
