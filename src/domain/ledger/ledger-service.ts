import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { ledgerAccounts, ledgerEntries, ledgerTransactions } from '../../db/schema/index.js';
import { DomainError } from '../errors.js';

export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
export type DbOrTx = Db | Tx;

export type AccountKind = 'available' | 'held' | 'payable' | 'fees' | 'external';
export type TransactionKind = 'top_up' | 'order_placed' | 'order_released' | 'order_refunded';

export interface Posting {
  accountId: number;
  kind: AccountKind;
  amount: number;
}

// Balance rows are always updated in this order (workspace rows, then publisher, then platform),
// the contract's lock order, so two movements never wait on each other in opposite orders.
const KIND_ORDER: Record<AccountKind, number> = { available: 0, held: 1, payable: 2, fees: 3, external: 4 };

export async function createWorkspaceAccounts(tx: DbOrTx, workspaceId: number): Promise<void> {
  await tx
    .insert(ledgerAccounts)
    .values([
      { kind: 'available', workspaceId },
      { kind: 'held', workspaceId },
    ])
    .onConflictDoNothing();
}

export async function createPublisherAccount(tx: DbOrTx, publisherId: number): Promise<void> {
  await tx.insert(ledgerAccounts).values({ kind: 'payable', publisherId }).onConflictDoNothing();
}

export async function workspaceAccountIds(
  tx: DbOrTx,
  workspaceId: number,
): Promise<{ available: number; held: number }> {
  const rows = await tx
    .select({ id: ledgerAccounts.id, kind: ledgerAccounts.kind })
    .from(ledgerAccounts)
    .where(and(eq(ledgerAccounts.workspaceId, workspaceId), inArray(ledgerAccounts.kind, ['available', 'held'])));
  const available = rows.find((r) => r.kind === 'available')?.id;
  const held = rows.find((r) => r.kind === 'held')?.id;
  if (available === undefined || held === undefined) throw new DomainError('not_found', 'Workspace not found.');
  return { available, held };
}

export async function platformAccountId(tx: DbOrTx, kind: 'fees' | 'external'): Promise<number> {
  const [row] = await tx
    .select({ id: ledgerAccounts.id })
    .from(ledgerAccounts)
    .where(and(eq(ledgerAccounts.kind, kind), isNull(ledgerAccounts.workspaceId), isNull(ledgerAccounts.publisherId)));
  if (!row) throw new Error(`platform account ${kind} is missing; migrations not applied?`);
  return row.id;
}

/**
 * Writes one balanced ledger transaction and applies it to the balance rows. Must run inside the
 * database transaction of the state change it pays for. A balance driven below zero violates the
 * CHECK constraint; callers that can run short check first under a row lock.
 */
export async function post(
  tx: Tx,
  movement: { kind: TransactionKind; orderId?: number | null; workspaceId?: number | null; postings: Posting[] },
): Promise<number> {
  const sum = movement.postings.reduce((s, p) => s + p.amount, 0);
  if (sum !== 0 || movement.postings.some((p) => !Number.isSafeInteger(p.amount) || p.amount === 0)) {
    throw new Error(`unbalanced ledger movement ${movement.kind}`);
  }
  const [txRow] = await tx
    .insert(ledgerTransactions)
    .values({ kind: movement.kind, orderId: movement.orderId ?? null, workspaceId: movement.workspaceId ?? null })
    .returning({ id: ledgerTransactions.id });
  const transactionId = txRow!.id;
  await tx.insert(ledgerEntries).values(movement.postings.map((p) => ({ transactionId, accountId: p.accountId, amount: p.amount })));
  const ordered = movement.postings
    .slice()
    .sort((a, b) => KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || a.accountId - b.accountId);
  for (const p of ordered) {
    await tx
      .update(ledgerAccounts)
      .set({ balance: sql`${ledgerAccounts.balance} + ${p.amount}` })
      .where(eq(ledgerAccounts.id, p.accountId));
  }
  return transactionId;
}

/** Money entering the system: external → the workspace's available balance. */
export async function topUp(db: Db, workspaceId: number, cents: number): Promise<{ balanceCents: number }> {
  if (!Number.isSafeInteger(cents) || cents <= 0) {
    throw new DomainError('invalid_input', 'The top-up must be a positive whole number of cents.', {
      errors: { cents: ['must be a positive integer'] },
    });
  }
  return db.transaction(async (tx) => {
    const accounts = await workspaceAccountIds(tx, workspaceId);
    const external = await platformAccountId(tx, 'external');
    await post(tx, {
      kind: 'top_up',
      workspaceId,
      postings: [
        { accountId: accounts.available, kind: 'available', amount: cents },
        { accountId: external, kind: 'external', amount: -cents },
      ],
    });
    const [row] = await tx
      .select({ balance: ledgerAccounts.balance })
      .from(ledgerAccounts)
      .where(eq(ledgerAccounts.id, accounts.available));
    return { balanceCents: row!.balance };
  });
}
