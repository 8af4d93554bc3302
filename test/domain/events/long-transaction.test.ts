import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { sequenceEvents } from '../../../src/domain/events/sequencer.js';
import { setupApp } from '../../helpers/app.js';
import { bearer } from '../../helpers/fixtures.js';
import { orderKit } from '../../helpers/orders.js';

// A long transaction elsewhere on the database (a bulk import, a migration) must not hold events
// out of the feed: positions are given at the sequencer's own commit, not below the oldest
// running transaction.

const h = await setupApp();
const { place, setup } = orderKit(h);

describe('events — a long transaction elsewhere', () => {
  it('positions an event committed while another transaction, older and still open, has written', async () => {
    const { ws, p } = await setup();
    const long = new pg.Client({ connectionString: h.database.url });
    await long.connect();
    try {
      // Older than the placement, holding an xid (it wrote) and the oldest snapshot, never committed here.
      await long.query('BEGIN');
      await long.query(`UPDATE fx_rates SET per_usd = per_usd WHERE currency = 'USD'`);
      const { rows } = await long.query<{ xid: string }>('SELECT pg_current_xact_id()::text AS xid');
      expect(rows[0]!.xid).toMatch(/^\d+$/);

      const order = (await place(ws.spendKey, { offer_ids: [p.offers[0]!.id], target_url: 'https://buyer.example/long' })).json().data[0];
      expect((await sequenceEvents(h.database.pool, h.clock.now())).positioned).toBeGreaterThanOrEqual(2);
      const feed = (await h.app.inject({ method: 'GET', url: `/api/v1/events?order_id=${order.id}`, headers: bearer(ws.readKey) })).json();
      expect(feed.data.map((e: { type: string; data: { id: number } }) => [e.type, e.data.id])).toEqual([['order.placed', order.id]]);
      // The long transaction was still open all along.
      const { rows: open } = await h.database.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_xid::text = $1 AND state = 'idle in transaction'`,
        [rows[0]!.xid],
      );
      expect(open[0]!.n).toBe(1);
    } finally {
      await long.query('ROLLBACK').catch(() => {});
      await long.end();
    }
  });
});
