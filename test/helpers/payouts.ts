import type pg from 'pg';
import { openPublisherPayable } from '../../src/domain/ledger/ledger-service.js';

/**
 * Money made payable to a publisher without walking orders through their guarantee window: the
 * ledger's opening balance (external → the publisher's payable), as the demo publisher's, so every
 * ledger invariant still holds. Payout tests start from it.
 */
export const makePayable = (pool: pg.Pool, publisherId: number, cents: number) => openPublisherPayable(pool, publisherId, cents);
