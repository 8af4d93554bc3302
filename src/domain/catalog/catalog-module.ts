import type pg from 'pg';
import type { Redis } from 'ioredis';
import type { Clock } from '../clock.js';
import { DomainError } from '../errors.js';
import { cachedItems, getAccount, getItem, listItems } from './catalog-queries.js';
import { createFailureLimiter } from '../limits/failure-limiter.js';
import { purchaseLookups } from './purchase-lookups.js';

export interface CatalogDeps {
  pool: pg.Pool;
  /** Times the item cache, so tests move time without sleeping. */
  clock: Clock;
  /** Shares the invalid-code counts between processes; without it each process counts alone. */
  redis?: Redis;
  redisPrefix: string;
}

/**
 * The brute-force guard on purchase codes (docs/interface-b.md): at most this many "Invalid
 * purchase code" answers per key per fixed one-minute window, then every validation by that key
 * is refused until the window passes, valid codes included, so guessing codes cannot be told apart
 * from using them.
 */
export const INVALID_CODES_PER_MINUTE = 30;

/**
 * The seller API's catalog: a seller's account and items, and purchase-code validation, with the
 * item cache and gathered lookups its validations share. Made once per app (`marketplaceApp`).
 */
export function createCatalogModule(deps: CatalogDeps) {
  const { pool } = deps;
  // A lookup the database is too busy to answer in time.
  const findPurchase = purchaseLookups(pool, cachedItems(pool, deps.clock), () => new DomainError('unavailable', 'The service is busy. Retry shortly.'));
  return {
    account: (workspaceId: number) => getAccount(pool, workspaceId),
    /** The workspace's items, oldest first (none when it has none). */
    items: (workspaceId: number) => listItems(pool, workspaceId),
    item: (workspaceId: number, itemId: number) => getItem(pool, workspaceId, itemId),
    /** The purchase behind a code, when it is a sale of the workspace that was not refunded. */
    purchase: (workspaceId: number, code: string) => findPurchase(workspaceId, code),
    /** Counts a key's invalid codes (by its id) and blocks it after too many in a minute. */
    codeGuard: createFailureLimiter({
      name: 'purchase-code',
      points: INVALID_CODES_PER_MINUTE,
      windowSeconds: 60,
      ...(deps.redis ? { redis: deps.redis } : {}),
      prefix: deps.redisPrefix,
    }),
  };
}

export type CatalogModule = ReturnType<typeof createCatalogModule>;
