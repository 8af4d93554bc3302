import Fastify from 'fastify';
import pg from 'pg';
import { afterAll, expect, it, vi } from 'vitest';
import { defaultConfig } from '../../src/config.js';
import { ManualClock } from '../helpers/clock.js';
import { durationsFrom } from '../../src/domain/orders/states.js';
import { deadlineSweeper } from '../../src/workers/deadline-sweeper.js';
import { createTestDatabase } from '../helpers/db.js';

// The in-server sweeper never runs two sweeps at once in one process: a sweep that outlasts the
// interval (here, one stuck behind a table lock) is not joined by the next ticks.
const database = await createTestDatabase({ max: 8 });
// Its own connection: sweeps without the guard would take every pooled one.
const observer = new pg.Client({ connectionString: database.url });
await observer.connect();
afterAll(async () => {
  await observer.end();
  await database.drop();
});

async function waitingOnLocks(): Promise<number> {
  const { rows } = await observer.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
  );
  return rows[0]!.n;
}

it('a sweep stuck behind a lock is not joined by the next ticks', async () => {
  const holder = await database.pool.connect();
  await holder.query('BEGIN');
  await holder.query('LOCK TABLE orders IN ACCESS EXCLUSIVE MODE');
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
  const app = Fastify();
  try {
    await app.register(deadlineSweeper, { pool: database.pool, clock: new ManualClock(), durations: durationsFrom(defaultConfig()), intervalMs: 20, eventRetentionDays: 30, approvalBaseUrl: 'http://127.0.0.1:3000', site: { baseUrl: 'http://127.0.0.1:3000' }, digestHourUtc: 7 });
    await app.ready();
    vi.advanceTimersByTime(20 * 10); // ten ticks
    // The first sweep reaches the lock; give the others every chance to (the pool has room for them).
    for (let i = 0; i < 500 && (await waitingOnLocks()) === 0; i++) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 200));
    expect(await waitingOnLocks()).toBe(1);
  } finally {
    vi.useRealTimers();
    await holder.query('ROLLBACK');
    holder.release();
    await app.close();
  }
});
