import type pg from 'pg';
import { isDatabaseUnavailable } from '../../db/errors.js';
import { findPurchaseRows, type PurchaseLookup, type PurchaseRow, purchaseJson } from '../../domain/catalog/catalog-queries.js';
import { GroupCommit } from '../../db/group-commit.js';

/**
 * The purchase lookups of concurrent validations, gathered: while half the pool's connections run
 * lookups, those that arrive wait (holding no connection) and then go together, up to 100 in one
 * query (`findPurchaseRows`), each answered with its own row. Reads of their own: any lookup may
 * go with any other, and one whose query fails runs again alone. Only the shared query is
 * gathered: each request then reads its item (usually from the cache) on its own, so one item's
 * failure is that request's alone.
 */
export function purchaseLookups(pool: pg.Pool, timedOut: () => Error): (workspaceId: number, code: string) => Promise<string | undefined> {
  let next = 0;
  const lookups = new GroupCommit<PurchaseLookup & { id: number }, PurchaseRow | undefined>({
    inFlight: Math.max(1, Math.floor((pool.options.max ?? 10) / 2)),
    maxWeight: 100,
    weightOf: () => 1,
    maxWaitMs: pool.options.connectionTimeoutMillis ?? 2_000,
    timedOut,
    // Every lookup is its own lane and identity: nothing orders or excludes them.
    laneOf: (l) => l.id,
    identityOf: (l) => String(l.id),
    identityInUse: () => new Error('a purchase lookup was asked for twice'),
    alone: () => false,
    retryAlone: (error) => !isDatabaseUnavailable(error),
    run: async (jobs) => (await findPurchaseRows(pool, jobs)).map((value) => ({ ok: true, value })),
  });
  return async (workspaceId, code) => purchaseJson(pool, { workspaceId, code }, await lookups.run({ id: ++next, workspaceId, code }));
}
