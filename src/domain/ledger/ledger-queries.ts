import type { Db } from '../../db/handle.js';
import type { WorkspacePrincipal } from '../keys/principal.js';
import { isoSeconds } from '../../common/iso-seconds.js';
import { formatCents } from '../money/format.js';

export interface LedgerLine {
  id: number;
  transaction_id: number;
  account: 'available' | 'held';
  amount: number;
  amount_formatted: string;
  kind: 'top_up' | 'order_placed' | 'order_released' | 'order_refunded' | 'guarantee_refunded' | 'adjustment';
  order_id: number | null;
  created_at: string;
}

const listStatement = `
  SELECT e.id, e.transaction_id, a.kind AS account, e.amount, t.kind, t.order_id, e.created_at,
         w.currency, fx.per_usd::float8 AS per_usd, count(*) OVER () AS total
    FROM ledger_entries e
    JOIN ledger_accounts a ON a.id = e.account_id
    JOIN ledger_transactions t ON t.id = e.transaction_id
    JOIN workspaces w ON w.id = a.workspace_id
    JOIN fx_rates fx ON fx.currency = w.currency
   WHERE a.workspace_id = $1
   ORDER BY e.id DESC
   LIMIT $2 OFFSET $3`;

/** The workspace's own ledger entries (available and held), newest first. */
export async function listLedger(pool: Db, principal: WorkspacePrincipal, page: number, perPage: number) {
  const { rows } = await pool.query<LedgerRow & { total: number }>({
    name: 'ledger_list',
    text: listStatement,
    values: [principal.workspaceId, perPage, (page - 1) * perPage],
  });
  let total = rows[0] ? Number(rows[0].total) : 0;
  if (!rows.length && page > 1) {
    const c = await pool.query({
      name: 'ledger_count',
      text: `SELECT count(*)::int AS n FROM ledger_entries e JOIN ledger_accounts a ON a.id = e.account_id WHERE a.workspace_id = $1`,
      values: [principal.workspaceId],
    });
    total = c.rows[0].n;
  }
  return { items: rows.map(ledgerLine), total };
}

interface LedgerRow {
  id: number;
  transaction_id: number;
  account: LedgerLine['account'];
  amount: number;
  kind: LedgerLine['kind'];
  order_id: number | null;
  created_at: Date;
  currency: string;
  per_usd: number;
}

function ledgerLine(r: LedgerRow): LedgerLine {
  return {
    id: r.id,
    transaction_id: r.transaction_id,
    account: r.account,
    amount: r.amount,
    amount_formatted: formatCents(r.amount, r.currency, r.per_usd),
    kind: r.kind,
    order_id: r.order_id,
    created_at: isoSeconds(r.created_at),
  };
}

const exportStatement = `
  SELECT e.id, e.transaction_id, a.kind AS account, e.amount, t.kind, t.order_id, e.created_at,
         w.currency, fx.per_usd::float8 AS per_usd
    FROM ledger_entries e
    JOIN ledger_accounts a ON a.id = e.account_id
    JOIN ledger_transactions t ON t.id = e.transaction_id
    JOIN workspaces w ON w.id = a.workspace_id
    JOIN fx_rates fx ON fx.currency = w.currency
   WHERE a.workspace_id = $1 AND e.id < $2
   ORDER BY e.id DESC
   LIMIT $3`;

/**
 * Every entry `listLedger` lists, newest first, read in batches by keyset (`e.id <` the last id
 * read), for the CSV export that streams them. Entries written while it runs have higher ids
 * than the first batch's and are not in it.
 */
export async function* eachLedgerEntry(pool: Db, workspaceId: number, batch = 500): AsyncGenerator<LedgerLine> {
  let after = Number.MAX_SAFE_INTEGER;
  for (;;) {
    const { rows } = await pool.query<LedgerRow>({ name: 'ledger_export', text: exportStatement, values: [workspaceId, after, batch] });
    for (const r of rows) yield ledgerLine(r);
    if (rows.length < batch) return;
    after = Number(rows[rows.length - 1]!.id);
  }
}
