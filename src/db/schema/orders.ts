import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgEnum,
  pgTable,
  primaryKey,
  smallint,
  text,
  timestamp,
  unique,
} from 'drizzle-orm/pg-core';
import { orderStatuses } from '../../common/enums.js';
import { contentBy, linkType, offers } from './offers.js';
import { projects } from './projects.js';
import { workspaces } from './workspaces.js';

export const orderStatus = pgEnum('order_status', orderStatuses);

export const orderParty = pgEnum('order_party', ['buyer', 'publisher']);

export const orders = pgTable(
  'orders',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    workspaceId: integer('workspace_id')
      .notNull()
      .references(() => workspaces.id),
    projectId: integer('project_id').references(() => projects.id),
    // Copies, not foreign keys: the placing key, and the offer's outlet and publisher, are read
    // in the placing transaction, and keys, outlets and publishers are never deleted. A foreign
    // key would cost every placement a locking lookup of a row that all concurrent placements
    // share (the publisher's above all).
    placedByKeyId: integer('placed_by_key_id'),
    // Or the person who placed it in the console (no key, so no key budget counts it). A copy too:
    // a person who leaves the workspace keeps their orders placed.
    placedByUserId: integer('placed_by_user_id'),
    // The approval request whose approval placed it (docs/approvals.md): who approved and when.
    // A copy, as the placing key is.
    approvalRequestId: bigint('approval_request_id', { mode: 'number' }),
    outletId: integer('outlet_id').notNull(),
    offerId: integer('offer_id')
      .notNull()
      .references(() => offers.id),
    publisherId: integer('publisher_id').notNull(),
    status: orderStatus('status').notNull(),
    // Frozen at placement: every release and refund moves exactly these amounts.
    publisherPriceCents: bigint('publisher_price_cents', { mode: 'number' }).notNull(),
    feeCents: bigint('fee_cents', { mode: 'number' }).notNull(),
    price: bigint('price', { mode: 'number' }).notNull(),
    contentBy: contentBy('content_by').notNull(),
    turnaroundDays: integer('turnaround_days').notNull(),
    // The offer's content terms as bought: every version's checks hold the content to these,
    // whatever the offer asks later.
    minWords: integer('min_words').notNull(),
    maxWords: integer('max_words').notNull(),
    maxLinks: integer('max_links').notNull(),
    // The link as promised: the link checks hold the live page to these.
    linkType: linkType('link_type').notNull(),
    sponsoredLabel: boolean('sponsored_label').notNull(),
    targetUrl: text('target_url').notNull(),
    anchorText: text('anchor_text'),
    brief: text('brief'),
    liveUrl: text('live_url'),
    declineReason: text('decline_reason'),
    // The state an expired order expired in: tells the publisher's misses from the buyer's.
    expiredIn: orderStatus('expired_in'),
    // The current state's deadline; which one (respond_by, deliver_by, review_by) follows from status.
    deadlineAt: timestamp('deadline_at', { withTimezone: true }),
    stateEnteredAt: timestamp('state_entered_at', { withTimezone: true }).notNull(),
    acceptedAt: timestamp('accepted_at', { withTimezone: true }),
    publishedAt: timestamp('published_at', { withTimezone: true }),
    completedAt: timestamp('completed_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
    // The link checks (docs/link-guarantee.md). The last check's results; null until one ran.
    liveChecks: jsonb('live_checks'),
    liveCheckedAt: timestamp('live_checked_at', { withTimezone: true }),
    livePassed: boolean('live_passed'),
    // The first check of the placement (the outlet's verification pass rate counts it).
    firstCheckPassed: boolean('first_check_passed'),
    // Times a failed check sent the placement back to the publisher (once at most).
    liveReturns: smallint('live_returns').notNull().default(0),
    // When the link checker should next fetch live_url; null: no check planned.
    linkCheckDueAt: timestamp('link_check_due_at', { withTimezone: true }),
    // The guarantee window: from completion until the payout moves to payable.
    guaranteeEndsAt: timestamp('guarantee_ends_at', { withTimezone: true }),
    payoutReleasedAt: timestamp('payout_released_at', { withTimezone: true }),
    // Link survival as first seen at or after 30 and 60 days from completion (track record).
    alive30d: boolean('alive_30d'),
    alive60d: boolean('alive_60d'),
  },
  (t) => [
    index('orders_workspace_idx').on(t.workspaceId, t.id.desc()),
    index('orders_publisher_idx').on(t.publisherId, t.id.desc()),
    index('orders_outlet_idx').on(t.outletId),
    // A key's budget (docs/budgets.md) sums what it placed in the current day and month.
    index('orders_placed_by_key_idx').on(t.placedByKeyId, t.createdAt),
    // No index on offer_id or project_id: nothing reads orders by them, and
    // offers, projects and keys are never deleted (deactivated or revoked instead), so their
    // foreign keys never look orders up. Each index would cost every placement an insert.
    // The sweep reads only open orders whose deadline has passed.
    index('orders_deadline_idx')
      .on(t.deadlineAt)
      .where(sql`${t.status} NOT IN ('completed', 'declined', 'expired', 'cancelled')`),
    // Searches sorted by link survival or verification in PostgreSQL read an outlet's checked orders only.
    index('orders_checked_outlet_idx')
      .on(t.outletId)
      .where(sql`${t.firstCheckPassed} IS NOT NULL OR ${t.alive30d} IS NOT NULL OR ${t.alive60d} IS NOT NULL`),
    // The link checker reads only orders with a check planned.
    index('orders_link_check_due_idx').on(t.linkCheckDueAt).where(sql`${t.linkCheckDueAt} IS NOT NULL`),
    check('orders_placed_by', sql`num_nonnulls(${t.placedByKeyId}, ${t.placedByUserId}) = 1`),
    check('orders_amounts', sql`${t.price} = ${t.publisherPriceCents} + ${t.feeCents} AND ${t.publisherPriceCents} > 0 AND ${t.feeCents} >= 0`),
  ],
);

/** Every version of an order's content, buyer's or publisher's, with the checks run on it. */
export const orderContents = pgTable(
  'order_contents',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    orderId: bigint('order_id', { mode: 'number' })
      .notNull()
      .references(() => orders.id),
    version: integer('version').notNull(),
    title: text('title').notNull(),
    body: text('body').notNull(),
    submittedBy: orderParty('submitted_by').notNull(),
    submittedAt: timestamp('submitted_at', { withTimezone: true }).notNull(),
    checks: jsonb('checks').notNull(),
  },
  (t) => [unique('order_contents_version_uq').on(t.orderId, t.version)],
);

export const orderMessages = pgTable(
  'order_messages',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    orderId: bigint('order_id', { mode: 'number' })
      .notNull()
      .references(() => orders.id),
    author: orderParty('author').notNull(),
    body: text('body').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  },
  (t) => [index('order_messages_order_idx').on(t.orderId, t.id)],
);

/**
 * Stored responses of POSTs under /api/v1 that carried an Idempotency-Key, written in the same
 * transaction as the change they describe.
 */
export const idempotencyRecords = pgTable(
  'idempotency_records',
  {
    // The authenticated key (keys are revoked, never deleted): no foreign key to check on every POST.
    apiKeyId: integer('api_key_id').notNull(),
    key: text('key').notNull(),
    fingerprint: text('fingerprint').notNull(),
    // The domain's outcome as JSON text (`{"value":…}` or `{"error":…}`, src/domain/idempotency/record-once.ts):
    // text, not jsonb, so a replay reads back the keys in the order the first call wrote them.
    outcome: text('outcome').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ name: 'idempotency_records_key_pk', columns: [t.apiKeyId, t.key] }), index('idempotency_records_expiry_idx').on(t.expiresAt)],
);

/**
 * The console's record-once book (docs/console.md): the outcome of a confirmation form a person
 * sent, under the idempotency key the form carried, kept 24 h like a REST request's. A person is
 * not an API key, so these cannot share idempotency_records' key.
 */
export const personIdempotencyRecords = pgTable(
  'person_idempotency_records',
  {
    // Users are deleted only with their memberships; a record outliving one answers nobody.
    userId: integer('user_id').notNull(),
    key: text('key').notNull(),
    fingerprint: text('fingerprint').notNull(),
    // The domain's outcome as JSON text, as in idempotency_records.
    outcome: text('outcome').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    primaryKey({ name: 'person_idempotency_records_key_pk', columns: [t.userId, t.key] }),
    index('person_idempotency_records_expiry_idx').on(t.expiresAt),
  ],
);
