import { describe, expect, it, vi } from 'vitest';
import { setupApp } from '../helpers/app.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { createTestDatabase } from '../helpers/db.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';
import { expectLedgerInvariants } from '../helpers/ledger-invariants.js';

// A short connect timeout: placements that wait longer than it in the workspace's queue are 503s.
const database = await createTestDatabase({ max: 20, connectTimeoutMs: 500 });
const h = await setupApp({ RATE_LIMIT_PER_MINUTE: 100_000 }, { database });
let seq = 0;
/** Only a hang detector: each wait is for an event. */
const HANG = { timeout: 25_000, interval: 10 };
const place = (key: string, offerId: number) =>
  h.app.inject({
    method: 'POST',
    url: '/api/v1/orders',
    headers: { ...bearer(key), 'idempotency-key': `q-${++seq}` },
    payload: { offer_ids: [offerId], target_url: 'https://buyer.example/' },
  });
const lockWaiters = async () =>
  (await database.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`)).rows[0]!.n;

describe('POST /api/v1/orders: placements of one workspace queue in the process — happy', () => {
  it('reach the database one group at a time; the rest wait in the process, and past the connect timeout answer 503; other workspaces go on', async () => {
    // Open the connections the test will use now: under load, opening one can itself take longer
    // than the short timeout.
    const warm = await Promise.all(Array.from({ length: 10 }, () => database.pool.connect()));
    for (const c of warm) c.release();
    const p = await publisherWithOutlet(database);
    const busy = await workspaceWithKeys(database.pool, { balanceCents: 1_000_000 });
    const other = await workspaceWithKeys(database.pool, { balanceCents: 1_000_000 });
    // A slow transaction holds the busy workspace's balance rows.
    const holder = await database.pool.connect();
    await holder.query('BEGIN');
    await holder.query('SELECT id FROM ledger_accounts WHERE workspace_id = $1 ORDER BY kind FOR UPDATE', [busy.workspaceId]);
    let answered = 0;
    const burst = Array.from({ length: 6 }, () => place(busy.spendKey, p.offers[0]!.id).finally(() => answered++));
    // Lock waiters, sampled from the burst until the five queued have answered: never more than
    // the one running for the workspace. (It may show as none for a moment: a group that waits past
    // its lock timeout goes back to run alone.)
    const seen: number[] = [];
    const sample = async () => {
      const n = await lockWaiters();
      seen.push(n);
      return n;
    };
    await vi.waitFor(async () => expect(await sample()).toBeGreaterThanOrEqual(1), HANG);
    // Another workspace is not held up.
    const elsewhere = await place(other.spendKey, p.offers[0]!.id);
    expect(elsewhere.statusCode, elsewhere.body).toBe(201);
    // The five queued in the process give up after the connect timeout, without having touched
    // the database: waited for as an event (a loaded machine may take longer than the timeout).
    await vi.waitFor(async () => {
      await sample();
      expect(answered).toBe(5);
    }, HANG);
    expect(Math.max(...seen)).toBe(1);
    // The first is still waiting in the database for the rows.
    await vi.waitFor(async () => expect(await lockWaiters()).toBe(1), HANG);
    await holder.query('COMMIT');
    holder.release();
    const statuses = (await Promise.all(burst)).map((r) => r.statusCode).sort();
    expect(statuses).toEqual([201, 503, 503, 503, 503, 503]);
    const refused = (await Promise.all(burst)).find((r) => r.statusCode === 503)!;
    expect(refused.json()).toMatchObject({ code: 'unavailable' });
    const { rows } = await database.pool.query('SELECT count(*)::int AS n FROM orders WHERE workspace_id = $1', [busy.workspaceId]);
    expect(rows[0].n).toBe(1);
    await expectLedgerInvariants(database);
  });
});
