import type { Tx } from '../../db/tx.js';
import type { AccountKind, TransactionKind } from './ledger-service.js';

export interface Posting {
  accountId: number;
  kind: AccountKind;
  amount: number;
}

export interface Movement {
  kind: TransactionKind;
  orderId: number | null;
  workspaceId: number | null;
  postings: Posting[];
}

// Balance rows are updated in this order (workspace rows, then publisher, then platform) — the
// contract's lock order — so two movements never wait on each other in opposite orders.
const KIND_ORDER: Record<AccountKind, number> = { available: 0, held: 1, payable: 2, fees: 3, external: 4 };

/**
 * Data-modifying CTEs that run in the same statement as the ledger posting, numbered from $1:
 * the state change a movement pays for (e.g. the orders being placed) then costs no extra round
 * trip. PostgreSQL checks foreign keys at the end of the statement, so entries may reference
 * rows the prefix inserts.
 */
export interface StatementPrefix {
  /** Names the prepared statement; one per distinct `ctes` text. */
  name: string;
  ctes: string;
  values: unknown[];
}

/**
 * The ledger's writes, as CTEs of a larger statement. They read three relations the statement
 * defines before them:
 *   m (kind, order_id, workspace_id, n)  one row per ledger transaction, n its position;
 *   p (n, account_id, amount)            its postings, each summing to zero per n;
 *   d (id, delta)                        the net change of each balance row, already locked.
 * This is the only SQL that writes ledger_transactions, ledger_entries and balances.
 */
export const LEDGER_WRITES = `
  t AS (INSERT INTO ledger_transactions (kind, order_id, workspace_id)
        SELECT kind, order_id, workspace_id FROM m ORDER BY n RETURNING id, kind, order_id),
  e AS (INSERT INTO ledger_entries (transaction_id, account_id, amount)
        SELECT t.id, p.account_id, p.amount
          FROM p JOIN m ON m.n = p.n JOIN t ON t.kind = m.kind AND t.order_id IS NOT DISTINCT FROM m.order_id),
  u AS (UPDATE ledger_accounts a SET balance = a.balance + d.delta FROM d WHERE a.id = d.id)`;

// m, p and d from parameters, for movements computed in Node.
const ledgerSources = (p: (n: number) => string) => `
  m AS (SELECT * FROM unnest(${p(1)}::ledger_transaction_kind[], ${p(2)}::bigint[], ${p(3)}::int[], ${p(4)}::int[]) AS m(kind, order_id, workspace_id, n)),
  p AS (SELECT * FROM unnest(${p(5)}::int[], ${p(6)}::int[], ${p(7)}::bigint[]) AS p(n, account_id, amount)),
  d AS (SELECT * FROM unnest(${p(8)}::int[], ${p(9)}::bigint[]) AS d(id, delta)),`;

const statementTexts = new Map<string, string>();
function ledgerStatement(prefix: StatementPrefix | undefined): { name: string; text: string } {
  const name = prefix ? `ledger_post_${prefix.name}` : 'ledger_post';
  let text = statementTexts.get(name);
  if (!text) {
    const offset = prefix?.values.length ?? 0;
    text = `WITH ${prefix ? `${prefix.ctes},` : ''}${ledgerSources((n) => `$${n + offset}`)}${LEDGER_WRITES}
  SELECT 1 AS posted`;
    statementTexts.set(name, text);
  }
  return { name, text };
}

/**
 * Writes balanced ledger transactions and applies them to the balance rows, inside the caller's
 * transaction (the one that changes the state being paid for). The workspace's own rows
 * (available, held) must already be locked in that transaction (`lockWorkspaceAccountsSql`): the
 * transactions, their entries and those balances go in one statement, taking no new lock.
 * Publisher and platform rows then follow, one at a time in the contract's lock order.
 * UNIQUE (order_id, kind) rejects a second placement, release or refund of an order; the
 * balance CHECK rejects an overdraft.
 */
export async function postMovements(tx: Tx, movements: Movement[], prefix?: StatementPrefix): Promise<void> {
  if (movements.length === 0) return;
  const seen = new Set<string>();
  for (const m of movements) {
    const sum = m.postings.reduce((s, p) => s + p.amount, 0);
    if (sum !== 0 || m.postings.some((p) => !Number.isSafeInteger(p.amount) || p.amount === 0)) {
      throw new Error(`unbalanced ledger movement ${m.kind}`);
    }
    const id = `${m.kind}:${m.orderId}`;
    if (seen.has(id)) throw new Error(`duplicate ledger movement ${id}`);
    seen.add(id);
  }
  const postings = movements.flatMap((m, n) => m.postings.map((p) => ({ n, ...p })));
  const deltas = new Map<number, { kind: AccountKind; amount: number }>();
  for (const p of postings) {
    const d = deltas.get(p.accountId) ?? { kind: p.kind, amount: 0 };
    d.amount += p.amount;
    deltas.set(p.accountId, d);
  }
  const all = [...deltas.entries()].filter(([, d]) => d.amount !== 0);
  const own = all.filter(([, d]) => d.kind === 'available' || d.kind === 'held');
  await tx.query({
    ...ledgerStatement(prefix),
    values: [
      ...(prefix?.values ?? []),
      movements.map((m) => m.kind),
      movements.map((m) => m.orderId),
      movements.map((m) => m.workspaceId),
      movements.map((_, n) => n),
      postings.map((p) => p.n),
      postings.map((p) => p.accountId),
      postings.map((p) => p.amount),
      own.map(([id]) => id),
      own.map(([, d]) => d.amount),
    ],
  });
  const others = all
    .filter(([, d]) => d.kind !== 'available' && d.kind !== 'held')
    .sort(([ia, a], [ib, b]) => KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || ia - ib);
  for (const [accountId, d] of others) {
    await tx.query({
      name: 'ledger_apply',
      text: 'UPDATE ledger_accounts SET balance = balance + $2 WHERE id = $1',
      values: [accountId, d.amount],
    });
  }
}

export interface AccountIds {
  available: number;
  held: number;
}

/** The workspace's two accounts; with `lock`, its available row is locked FOR UPDATE (and read). */
export type AccountRow = { id: number; kind: 'available' | 'held'; balance: number };

/**
 * The statement that locks a workspace's two balance rows (workspace id as `param`), in the
 * contract's lock order; other statements may embed it (placement reads its context with it).
 */
export const lockWorkspaceAccountsSql = (param: string) =>
  `SELECT id, kind, balance FROM ledger_accounts WHERE workspace_id = ${param} AND kind IN ('available', 'held') ORDER BY kind FOR UPDATE`;

/** The locked rows as account ids and the available balance. */
export function workspaceAccounts(workspaceId: number, rows: AccountRow[] | null): AccountIds & { availableBalance: number } {
  const available = rows?.find((r) => r.kind === 'available');
  const held = rows?.find((r) => r.kind === 'held');
  if (!available || !held) throw new Error(`workspace ${workspaceId} has no ledger accounts`);
  return { available: available.id, held: held.id, availableBalance: available.balance };
}

export async function lockWorkspaceAccounts(tx: Tx, workspaceId: number): Promise<AccountIds & { availableBalance: number }> {
  const { rows } = await tx.query<AccountRow>({ name: 'ledger_lock_workspace', text: lockWorkspaceAccountsSql('$1'), values: [workspaceId] });
  return workspaceAccounts(workspaceId, rows);
}

export async function payableAccountId(tx: Tx, publisherId: number): Promise<number> {
  const { rows } = await tx.query<{ id: number }>({
    name: 'ledger_payable',
    text: `SELECT id FROM ledger_accounts WHERE publisher_id = $1 AND kind = 'payable'`,
    values: [publisherId],
  });
  if (!rows[0]) throw new Error(`publisher ${publisherId} has no payable account`);
  return rows[0].id;
}

export async function platformAccount(tx: Tx, kind: 'fees' | 'external'): Promise<number> {
  const { rows } = await tx.query<{ id: number }>({
    name: 'ledger_platform',
    text: `SELECT id FROM ledger_accounts WHERE kind = $1 AND workspace_id IS NULL AND publisher_id IS NULL`,
    values: [kind],
  });
  if (!rows[0]) throw new Error(`platform account ${kind} is missing; migrations not applied?`);
  return rows[0].id;
}
