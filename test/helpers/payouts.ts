import type pg from 'pg';
import { withTransaction } from '../../src/db/handle.js';
import { platformAccount, post } from '../../src/domain/ledger/ledger.js';

/**
 * Money made payable to a publisher without walking orders through their guarantee window: a
 * balanced movement external → the publisher's payable (kind `adjustment`), so every ledger
 * invariant still holds. Payout tests start from it.
 */
export async function makePayable(pool: pg.Pool, publisherId: number, cents: number): Promise<void> {
  await withTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ id: number }>(`SELECT id FROM ledger_accounts WHERE publisher_id = $1 AND kind = 'payable' FOR UPDATE`, [publisherId]);
    await post(tx, [
      {
        kind: 'adjustment',
        orderId: null,
        workspaceId: null,
        postings: [
          { accountId: rows[0]!.id, kind: 'payable', amount: cents },
          { accountId: await platformAccount(tx, 'external'), kind: 'external', amount: -cents },
        ],
      },
    ]);
  });
}
