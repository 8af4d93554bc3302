import { expect } from 'vitest';
import type { Database } from '../../src/db/client.js';

/**
 * The ledger invariants of docs/orders.md, checked against the database itself:
 * every transaction sums to zero, so all entries do; each balance equals the sum of its
 * entries; no balance but `external` and `adjustments` (staff adjustments, docs/billing.md) is
 * negative; a workspace's `held` equals the price of its open orders (once orders exist); a
 * publisher's `in_payout` equals its payouts still pending (docs/billing.md).
 */
export async function expectLedgerInvariants(database: Database): Promise<void> {
  const q = async (sql: string) => (await database.pool.query(sql)).rows;
  const [total] = await q('SELECT COALESCE(sum(amount), 0)::bigint AS s FROM ledger_entries');
  expect(Number(total.s), 'sum of all entries').toBe(0);
  const unbalanced = await q(
    'SELECT transaction_id, sum(amount) AS s FROM ledger_entries GROUP BY transaction_id HAVING sum(amount) <> 0',
  );
  expect(unbalanced, 'transactions whose entries do not sum to zero').toEqual([]);
  const drift = await q(`
    SELECT a.id, a.kind, a.balance, COALESCE(sum(e.amount), 0)::bigint AS entries
      FROM ledger_accounts a LEFT JOIN ledger_entries e ON e.account_id = a.id
     GROUP BY a.id HAVING a.balance <> COALESCE(sum(e.amount), 0)`);
  expect(drift, 'accounts whose balance differs from the sum of their entries').toEqual([]);
  const negative = await q(`SELECT id, kind, balance FROM ledger_accounts WHERE kind NOT IN ('external', 'adjustments') AND balance < 0`);
  expect(negative, 'negative balances').toEqual([]);
  const hasOrders = (await q(`SELECT to_regclass('public.orders') IS NOT NULL AS ok`))[0].ok;
  if (hasOrders) {
    const heldDrift = await q(`
      SELECT a.workspace_id, a.balance, COALESCE(o.open, 0)::bigint AS open
        FROM ledger_accounts a
        LEFT JOIN (SELECT workspace_id, sum(price) AS open FROM orders
                    WHERE status NOT IN ('completed', 'link_lost', 'declined', 'expired', 'cancelled', 'link_refunded')
                    GROUP BY workspace_id) o
          ON o.workspace_id = a.workspace_id
       WHERE a.kind = 'held' AND a.balance <> COALESCE(o.open, 0)`);
    expect(heldDrift, 'held balances that differ from open orders').toEqual([]);
    // A publisher's pending holds the payouts of approved placements still in their guarantee window.
    const pendingDrift = await q(`
      SELECT a.publisher_id, a.balance, COALESCE(o.held, 0)::bigint AS in_window
        FROM ledger_accounts a
        LEFT JOIN (SELECT publisher_id, sum(publisher_price_cents) AS held FROM orders
                    WHERE guarantee_ends_at IS NOT NULL AND payout_released_at IS NULL AND status IN ('completed', 'link_lost')
                    GROUP BY publisher_id) o
          ON o.publisher_id = a.publisher_id
       WHERE a.kind = 'pending' AND a.balance <> COALESCE(o.held, 0)`);
    expect(pendingDrift, 'pending balances that differ from payouts in their guarantee window').toEqual([]);
  }
  const hasPayouts = (await q(`SELECT to_regclass('public.payouts') IS NOT NULL AS ok`))[0].ok;
  if (hasPayouts) {
    // A publisher's in_payout holds exactly its payouts asked for and not yet sent or failed (docs/billing.md).
    const inPayoutDrift = await q(`
      SELECT a.publisher_id, a.balance, COALESCE(p.waiting, 0)::bigint AS waiting
        FROM ledger_accounts a
        LEFT JOIN (SELECT publisher_id, sum(amount_cents) AS waiting FROM payouts WHERE status = 'pending' GROUP BY publisher_id) p
          ON p.publisher_id = a.publisher_id
       WHERE a.kind = 'in_payout' AND a.balance <> COALESCE(p.waiting, 0)`);
    expect(inPayoutDrift, 'in_payout balances that differ from pending payouts').toEqual([]);
  }
}
