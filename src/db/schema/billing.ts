import { sql } from 'drizzle-orm';
import { bigint, bigserial, check, index, integer, pgEnum, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { topUpStatuses } from '../../common/enums.js';
import { apiKeys } from './api-keys.js';
import { ledgerTransactions } from './ledger.js';
import { users } from './users.js';
import { workspaces } from './workspaces.js';

export const topUpStatus = pgEnum('top_up_status', topUpStatuses);

/**
 * A workspace's request to add funds (docs/billing.md): an amount, the reference the payment must
 * carry, and the instructions given, as they were when it was made (the invoice shows them).
 * Credited once, by staff who confirm the amount received, in the transaction that writes the
 * ledger's top-up; its `ledger_transaction_id` is that top-up, and `decided_by_user_id` who did it.
 */
export const topUpRequests = pgTable(
  'top_up_requests',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    workspaceId: integer('workspace_id')
      .notNull()
      .references(() => workspaces.id),
    /** What the payer writes on the transfer ("TU-7KQ4-M2XD"): unique, typed by people. */
    reference: text('reference').notNull(),
    /** The provider it goes through (`bank_transfer`); text, so a new provider needs no migration. */
    provider: text('provider').notNull(),
    status: topUpStatus('status').notNull().default('pending'),
    /** US cents asked for; the amount received (set at confirmation) may differ. */
    amountCents: bigint('amount_cents', { mode: 'number' }).notNull(),
    receivedCents: bigint('received_cents', { mode: 'number' }),
    instructions: text('instructions').notNull(),
    // Who asked: a person in the console, or a spending key through the API (exactly one).
    requestedByUserId: integer('requested_by_user_id').references(() => users.id),
    requestedByKeyId: integer('requested_by_key_id').references(() => apiKeys.id),
    requestedAt: timestamp('requested_at', { withTimezone: true }).notNull(),
    // Who decided: staff (confirmed, rejected) or the workspace's person (cancelled); a key cancels with decided_by_key_id.
    decidedByUserId: integer('decided_by_user_id').references(() => users.id),
    decidedByKeyId: integer('decided_by_key_id').references(() => apiKeys.id),
    decidedAt: timestamp('decided_at', { withTimezone: true }),
    rejectReason: text('reject_reason'),
    ledgerTransactionId: bigint('ledger_transaction_id', { mode: 'number' }).references(() => ledgerTransactions.id),
  },
  (t) => [
    uniqueIndex('top_up_requests_reference_uq').on(t.reference),
    index('top_up_requests_workspace_idx').on(t.workspaceId, t.id.desc()),
    // The operations console's queue: the requests waiting, oldest first.
    index('top_up_requests_pending_idx').on(t.id).where(sql`${t.status} = 'pending'`),
    check('top_up_requests_amount', sql`${t.amountCents} > 0`),
    check('top_up_requests_received', sql`${t.receivedCents} IS NULL OR ${t.receivedCents} > 0`),
    check('top_up_requests_requester', sql`num_nonnulls(${t.requestedByUserId}, ${t.requestedByKeyId}) = 1`),
    check('top_up_requests_confirmed', sql`(${t.status} = 'confirmed') = (${t.ledgerTransactionId} IS NOT NULL AND ${t.receivedCents} IS NOT NULL)`),
  ],
);

/**
 * A staff adjustment of a workspace's available balance (docs/billing.md): the amount (positive
 * credits, negative debits), the reason, who made it, and its ledger transaction (kind
 * `adjustment`, against the platform's `adjustments` account).
 */
export const ledgerAdjustments = pgTable(
  'ledger_adjustments',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    workspaceId: integer('workspace_id')
      .notNull()
      .references(() => workspaces.id),
    amountCents: bigint('amount_cents', { mode: 'number' }).notNull(),
    reason: text('reason').notNull(),
    staffUserId: integer('staff_user_id')
      .notNull()
      .references(() => users.id),
    ledgerTransactionId: bigint('ledger_transaction_id', { mode: 'number' })
      .notNull()
      .references(() => ledgerTransactions.id),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    index('ledger_adjustments_workspace_idx').on(t.workspaceId, t.id.desc()),
    uniqueIndex('ledger_adjustments_transaction_uq').on(t.ledgerTransactionId),
    check('ledger_adjustments_amount', sql`${t.amountCents} <> 0`),
    check('ledger_adjustments_reason', sql`length(btrim(${t.reason})) > 0`),
  ],
);
