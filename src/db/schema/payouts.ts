import { sql } from 'drizzle-orm';
import { bigint, bigserial, check, index, integer, pgEnum, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { payoutStatuses } from '../../common/enums.js';
import { ledgerTransactions } from './ledger.js';
import { publishers } from './publishers.js';
import { users } from './users.js';

export const payoutStatus = pgEnum('payout_status', payoutStatuses);

/**
 * Where a publisher is paid (docs/billing.md, "Payouts"): one per publisher, set by its owners.
 * The details (holder, IBAN or account and routing numbers, or a PayPal address) are JSON sealed
 * with AES-256-GCM (the webhook secrets' box); `masked` is what pages show ("IBAN ending 3000").
 */
export const payoutDestinations = pgTable(
  'payout_destinations',
  {
    publisherId: integer('publisher_id')
      .primaryKey()
      .references(() => publishers.id),
    /** `bank` or `paypal`; text, so a new method needs no migration. */
    method: text('method').notNull(),
    detailsSealed: text('details_sealed').notNull(),
    masked: text('masked').notNull(),
    updatedByUserId: integer('updated_by_user_id')
      .notNull()
      .references(() => users.id),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  },
  (t) => [check('payout_destinations_method', sql`${t.method} IN ('bank', 'paypal')`)],
);

/**
 * A publisher's payout: the whole payable balance when its owner asked, moved at once into the
 * publisher's `in_payout` account (`ledger_transaction_id`), with the destination as it was then
 * (sealed, and masked). Staff mark it sent with the bank's reference (in_payout → external) or
 * failed with a reason (in_payout → payable): `decided_by_user_id`, `decided_ledger_transaction_id`.
 */
export const payouts = pgTable(
  'payouts',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    publisherId: integer('publisher_id')
      .notNull()
      .references(() => publishers.id),
    /** "PO-7KQ4-M2XD": what the transfer's description carries, unique. */
    reference: text('reference').notNull(),
    provider: text('provider').notNull(),
    status: payoutStatus('status').notNull().default('pending'),
    amountCents: bigint('amount_cents', { mode: 'number' }).notNull(),
    method: text('method').notNull(),
    destinationSealed: text('destination_sealed').notNull(),
    destinationMasked: text('destination_masked').notNull(),
    requestedByUserId: integer('requested_by_user_id')
      .notNull()
      .references(() => users.id),
    requestedAt: timestamp('requested_at', { withTimezone: true }).notNull(),
    ledgerTransactionId: bigint('ledger_transaction_id', { mode: 'number' })
      .notNull()
      .references(() => ledgerTransactions.id),
    /** The batch staff exported as CSV for the bank ("PB-…"), if any. */
    batchReference: text('batch_reference'),
    decidedByUserId: integer('decided_by_user_id').references(() => users.id),
    decidedAt: timestamp('decided_at', { withTimezone: true }),
    /** The bank's (or provider's) reference of the transfer, once sent. */
    sentReference: text('sent_reference'),
    failureReason: text('failure_reason'),
    decidedLedgerTransactionId: bigint('decided_ledger_transaction_id', { mode: 'number' }).references(() => ledgerTransactions.id),
  },
  (t) => [
    uniqueIndex('payouts_reference_uq').on(t.reference),
    index('payouts_publisher_idx').on(t.publisherId, t.id.desc()),
    index('payouts_batch_idx').on(t.batchReference).where(sql`${t.batchReference} IS NOT NULL`),
    // The staff's queue: the payouts to send, oldest first.
    index('payouts_pending_idx').on(t.id).where(sql`${t.status} = 'pending'`),
    check('payouts_amount', sql`${t.amountCents} > 0`),
    check('payouts_sent', sql`(${t.status} = 'sent') = (${t.sentReference} IS NOT NULL)`),
    check('payouts_failed', sql`(${t.status} = 'failed') = (${t.failureReason} IS NOT NULL)`),
    check('payouts_decided', sql`(${t.status} = 'pending') = (${t.decidedLedgerTransactionId} IS NULL)`),
  ],
);
