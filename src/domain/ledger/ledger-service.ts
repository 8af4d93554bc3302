import { and, eq, inArray, isNull } from 'drizzle-orm';
import { ledgerAccounts } from '../../db/schema/index.js';
import { type Db, orm, withTransaction } from '../../db/handle.js';
import { constraintOf, pgErrorCode } from '../../db/errors.js';
import { DomainError } from '../errors.js';
import { MAX_BALANCE_CENTS } from './limits.js';
import * as ledger from './ledger.js';

export type { AccountKind, TransactionKind } from './ledger.js';

export async function createWorkspaceAccounts(tx: Db, workspaceId: number): Promise<void> {
  await tx.query(`INSERT INTO ledger_accounts (kind, workspace_id) VALUES ('available', $1), ('held', $1) ON CONFLICT DO NOTHING`, [workspaceId]);
}

export async function createPublisherAccount(tx: Db, publisherId: number): Promise<void> {
  await tx.query(`INSERT INTO ledger_accounts (kind, publisher_id) VALUES ('pending', $1), ('payable', $1), ('in_payout', $1) ON CONFLICT DO NOTHING`, [publisherId]);
}

/**
 * A publisher's payable balance to start with, from outside the service (the demo publisher's
 * earnings before the demo, so a payout can be tried at once: docs/billing.md).
 */
export async function openPublisherPayable(pool: Db, publisherId: number, cents: number): Promise<void> {
  await withTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ id: number }>({
      name: 'ledger_publisher_payable_lock',
      text: `SELECT id FROM ledger_accounts WHERE publisher_id = $1 AND kind = 'payable' FOR UPDATE`,
      values: [publisherId],
    });
    if (!rows[0]) throw new DomainError('not_found', 'Publisher not found.');
    await ledger.post(tx, [ledger.openingPayable(rows[0].id, await ledger.platformAccount(tx, 'external'), cents)]);
  });
}

export async function workspaceAccountIds(
  db: Db,
  workspaceId: number,
): Promise<{ available: number; held: number }> {
  const rows = await orm(db)
    .select({ id: ledgerAccounts.id, kind: ledgerAccounts.kind })
    .from(ledgerAccounts)
    .where(and(eq(ledgerAccounts.workspaceId, workspaceId), inArray(ledgerAccounts.kind, ['available', 'held'])));
  const available = rows.find((r) => r.kind === 'available')?.id;
  const held = rows.find((r) => r.kind === 'held')?.id;
  if (available === undefined || held === undefined) throw new DomainError('not_found', 'Workspace not found.');
  return { available, held };
}

export async function platformAccountId(db: Db, kind: 'fees' | 'external' | 'adjustments'): Promise<number> {
  const [row] = await orm(db)
    .select({ id: ledgerAccounts.id })
    .from(ledgerAccounts)
    .where(and(eq(ledgerAccounts.kind, kind), isNull(ledgerAccounts.workspaceId), isNull(ledgerAccounts.publisherId)));
  if (!row) throw new Error(`platform account ${kind} is missing; migrations not applied?`);
  return row.id;
}

/** Money entering the system: external → the workspace's available balance. */
export async function topUp(pool: Db, workspaceId: number, cents: number): Promise<{ balanceCents: number }> {
  return withTransaction(pool, (tx) => creditTopUp(tx, workspaceId, cents));
}

const tooMuch = (what: string, field: string) =>
  new DomainError('invalid_input', `The top-up would take ${what} beyond the largest amount the ledger holds.`, {
    errors: { [field]: [`would take ${what} beyond ${MAX_BALANCE_CENTS.toLocaleString('en-US')} cents`] },
  });

/**
 * A top-up inside the caller's transaction (creating a workspace with its opening balance).
 * `field` names the amount in refusals, as the caller's input calls it.
 */
export async function creditTopUp(tx: Db, workspaceId: number, cents: number, field = 'cents'): Promise<{ balanceCents: number; transactionId: number }> {
  if (!Number.isSafeInteger(cents) || cents <= 0) {
    throw new DomainError('invalid_input', 'The top-up must be a positive whole number of cents.', {
      errors: { [field]: ['must be a positive integer'] },
    });
  }
  const exists = await tx.query('SELECT 1 FROM workspaces WHERE id = $1', [workspaceId]);
  if (exists.rowCount === 0) throw new DomainError('not_found', 'Workspace not found.');
  const accounts = await ledger.lockWorkspace(tx, workspaceId);
  if (accounts.availableBalance + cents > MAX_BALANCE_CENTS) throw tooMuch("the workspace's balance", field);
  const external = await ledger.platformAccount(tx, 'external');
  let transactionId: number;
  try {
    [transactionId] = (await ledger.post(tx, [ledger.topUp(accounts, external, cents)])) as [number];
  } catch (err) {
    // All money ever topped up is the external account's (negative) balance, bounded the same way.
    if (pgErrorCode(err) === '23514' && constraintOf(err) === 'ledger_accounts_balance_exact') throw tooMuch('the money held by the service', field);
    throw err;
  }
  return { balanceCents: accounts.availableBalance + cents, transactionId };
}
