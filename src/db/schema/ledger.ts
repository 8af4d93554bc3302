import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  check,
  index,
  integer,
  pgEnum,
  pgTable,
  serial,
  timestamp,
  unique,
} from 'drizzle-orm/pg-core';
import { orders } from './orders.js';
import { publishers } from './publishers.js';
import { workspaces } from './workspaces.js';

export const ledgerAccountKind = pgEnum('ledger_account_kind', [
  'available',
  'held',
  'pending',
  'payable',
  'fees',
  'external',
  // The platform's side of staff adjustments (docs/billing.md): minus the net of all money credited by hand.
  'adjustments',
  // A publisher's money asked to be paid out and not yet sent (docs/billing.md, "Payouts").
  'in_payout',
]);

export const ledgerTransactionKind = pgEnum('ledger_transaction_kind', [
  'top_up',
  'order_placed',
  'order_released',
  'order_refunded',
  'payout_released',
  'guarantee_refunded',
  'adjustment',
  // Payouts (docs/billing.md): payable → in_payout when asked; in_payout → external when sent; back to payable when failed.
  'payout_requested',
  'payout_sent',
  'payout_failed',
  // A balance an account starts with, from outside the service (the demo publisher's earnings before the demo).
  'opening_balance',
]);

/**
 * One row per account, carrying its balance. Only `external` (money entering or leaving the
 * system) and `adjustments` (the platform's side of staff adjustments) may go negative; the
 * CHECK is the last line of defence against a double spend.
 */
export const ledgerAccounts = pgTable(
  'ledger_accounts',
  {
    id: serial('id').primaryKey(),
    kind: ledgerAccountKind('kind').notNull(),
    workspaceId: integer('workspace_id').references(() => workspaces.id),
    publisherId: integer('publisher_id').references(() => publishers.id),
    balance: bigint('balance', { mode: 'number' }).notNull().default(0),
  },
  (t) => [
    unique('ledger_accounts_owner_uq').on(t.kind, t.workspaceId, t.publisherId).nullsNotDistinct(),
    index('ledger_accounts_workspace_idx').on(t.workspaceId),
    index('ledger_accounts_publisher_idx').on(t.publisherId),
    check('ledger_accounts_balance_non_negative', sql`${t.kind} IN ('external', 'adjustments') OR ${t.balance} >= 0`),
    // ±(2^53 − 1): what a JSON number carries exactly (MAX_BALANCE_CENTS in domain/ledger/limits.ts).
    check('ledger_accounts_balance_exact', sql`${t.balance} BETWEEN -9007199254740991 AND 9007199254740991`),
    check(
      'ledger_accounts_owner_matches_kind',
      sql`(${t.kind} IN ('available', 'held') AND ${t.workspaceId} IS NOT NULL AND ${t.publisherId} IS NULL)
        OR (${t.kind} IN ('pending', 'payable', 'in_payout') AND ${t.publisherId} IS NOT NULL AND ${t.workspaceId} IS NULL)
        OR (${t.kind} IN ('fees', 'external', 'adjustments') AND ${t.workspaceId} IS NULL AND ${t.publisherId} IS NULL)`,
    ),
  ],
);

export const ledgerTransactions = pgTable(
  'ledger_transactions',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    kind: ledgerTransactionKind('kind').notNull(),
    // UNIQUE (order_id, kind) makes placement, release and refund happen at most once per order.
    orderId: bigint('order_id', { mode: 'number' }).references(() => orders.id),
    workspaceId: integer('workspace_id').references(() => workspaces.id),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  // No index on workspace_id: the ledger is read by account (ledger_entries_account_idx) and
  // workspaces are never deleted, so nothing looks transactions up by workspace.
  (t) => [unique('ledger_transactions_order_kind_uq').on(t.orderId, t.kind)],
);

/** Append-only. Positive amounts increase the account; each transaction's entries sum to zero. */
export const ledgerEntries = pgTable(
  'ledger_entries',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    transactionId: bigint('transaction_id', { mode: 'number' })
      .notNull()
      .references(() => ledgerTransactions.id),
    accountId: integer('account_id')
      .notNull()
      .references(() => ledgerAccounts.id),
    amount: bigint('amount', { mode: 'number' }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  // Read by account, newest first. No index on transaction_id: entries are reached from their
  // account, and transactions are never deleted. Each index costs every posting an insert.
  (t) => [
    index('ledger_entries_account_idx').on(t.accountId, t.id),
    check('ledger_entries_amount_non_zero', sql`${t.amount} <> 0`),
  ],
);
