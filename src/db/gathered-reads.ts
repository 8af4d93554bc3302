import type pg from 'pg';
import { isDatabaseUnavailable } from './errors.js';
import { GroupCommit } from './group-commit.js';

/**
 * Reads of concurrent requests, gathered: while half the pool's connections run such reads, those
 * that arrive wait (holding no connection) and then go together, up to 100 in one call of `read`,
 * which answers each in its order. Any read may go with any other, one whose shared read fails
 * runs again alone, and each goes in a read that starts after it is asked, so it sees everything
 * committed before. Waiting longer than a connection may be waited for is `timedOut()`'s error.
 */
export function gatheredReads<Q, A>(pool: pg.Pool, timedOut: () => Error, read: (asked: Q[]) => Promise<A[]>): (asked: Q) => Promise<A> {
  let next = 0;
  const reads = new GroupCommit<{ id: number; asked: Q }, A>({
    inFlight: Math.max(1, Math.floor((pool.options.max ?? 10) / 2)),
    maxWeight: 100,
    weightOf: () => 1,
    maxWaitMs: pool.options.connectionTimeoutMillis ?? 2_000,
    timedOut,
    // Every read is its own lane and identity: nothing orders or excludes them.
    laneOf: (r) => r.id,
    identityOf: (r) => String(r.id),
    identityInUse: () => new Error('a gathered read was asked for twice'),
    alone: () => false,
    retryAlone: (error) => !isDatabaseUnavailable(error),
    run: async (jobs) => (await read(jobs.map((j) => j.asked))).map((value) => ({ ok: true, value })),
  });
  return (asked) => reads.run({ id: ++next, asked });
}
