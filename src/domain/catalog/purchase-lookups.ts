import type pg from 'pg';
import { gatheredReads } from '../../db/gathered-reads.js';
import { findPurchaseRows, type PurchaseLookup, purchaseJson } from './catalog-queries.js';

/**
 * The purchase lookups of concurrent validations, gathered (`gatheredReads`): up to 100 codes in
 * one query (`findPurchaseRows`), each answered with its own row. Only that query is shared: each
 * request then reads its item (usually from the cache) on its own, so one item's failure is that
 * request's alone.
 */
export function purchaseLookups(pool: pg.Pool, timedOut: () => Error): (workspaceId: number, code: string) => Promise<string | undefined> {
  const findRow = gatheredReads(pool, timedOut, (lookups: PurchaseLookup[]) => findPurchaseRows(pool, lookups));
  return async (workspaceId, code) => purchaseJson(pool, { workspaceId, code }, await findRow({ workspaceId, code }));
}
