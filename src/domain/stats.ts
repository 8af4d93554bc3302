import type { Db } from '../db/handle.js';

// Figures of the business as a whole, read when metrics are scraped (one cheap query each).

export async function orderCountsByStatus(pool: Db): Promise<Array<{ status: string; n: number }>> {
  const { rows } = await pool.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM orders GROUP BY status');
  return rows;
}

/** The sum of the ledger's balances per account kind, in US cents. */
export async function ledgerTotalsByKind(pool: Db): Promise<Array<{ kind: string; total: number }>> {
  const { rows } = await pool.query<{ kind: string; total: number }>('SELECT kind, sum(balance)::bigint AS total FROM ledger_accounts GROUP BY kind');
  return rows;
}
