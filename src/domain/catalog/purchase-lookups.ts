import type pg from 'pg';
import { gatheredReads } from '../../db/gathered-reads.js';
import { findPurchaseRows, type ItemReader, type Purchase, type PurchaseLookup, purchaseOf } from './catalog-queries.js';

/**
 * The purchase lookups of concurrent validations, gathered (`gatheredReads`): up to 100 codes in
 * one query (`findPurchaseRows`), each answered with its own row. Only that query is shared: each
 * request then reads its item (usually from `items`' cache) on its own, so one item's failure is that
 * request's alone.
 */
export function purchaseLookups(pool: pg.Pool, items: ItemReader, timedOut: () => Error): (workspaceId: number, code: string) => Promise<Purchase | undefined> {
  const findRow = gatheredReads(pool, timedOut, (lookups: PurchaseLookup[]) => findPurchaseRows(pool, lookups));
  return async (workspaceId, code) => purchaseOf(items, { workspaceId, code }, await findRow({ workspaceId, code }));
}
