import { sql } from 'drizzle-orm';
import { bigint, bigserial, check, index, integer, jsonb, pgEnum, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { approvalActions, approvalStatuses } from '../../common/enums.js';
import { apiKeys } from './api-keys.js';
import { users } from './users.js';
import { workspaces } from './workspaces.js';

export const approvalAction = pgEnum('approval_action', approvalActions);
export const approvalStatus = pgEnum('approval_status', approvalStatuses);

/**
 * A spending action of an agent's key that waits for a person (docs/approvals.md): the key's
 * request as it was sent, checked but not run, until a member who may spend approves it in the
 * console (then it runs, with the key as the buyer) or declines it, the agent cancels it, or it
 * expires. Nothing is held while it waits.
 */
export const approvalRequests = pgTable(
  'approval_requests',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    workspaceId: integer('workspace_id')
      .notNull()
      .references(() => workspaces.id),
    action: approvalAction('action').notNull(),
    status: approvalStatus('status').notNull().default('pending'),
    requestedByKeyId: integer('requested_by_key_id')
      .notNull()
      .references(() => apiKeys.id),
    // The request's body as sent (place_orders: the placement input; approve_placement: the order),
    // and its canonical hash: the same body from the same key while one is pending answers that one.
    body: jsonb('body').notNull(),
    fingerprint: text('fingerprint').notNull(),
    // approve_placement: the order to approve.
    orderId: bigint('order_id', { mode: 'number' }),
    // What the person is asked to approve, as checked when the request was made (shown, not trusted:
    // approving runs every check again).
    totalCents: bigint('total_cents', { mode: 'number' }).notNull(),
    items: jsonb('items').notNull(),
    requestedAt: timestamp('requested_at', { withTimezone: true }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    decidedByUserId: integer('decided_by_user_id').references(() => users.id),
    decidedAt: timestamp('decided_at', { withTimezone: true }),
    declineReason: text('decline_reason'),
    // The orders the approval placed (or approved).
    orderIds: bigint('order_ids', { mode: 'number' }).array().notNull().default(sql`'{}'::bigint[]`),
    // Why approving could not run it ({code, message}): status failed.
    failure: jsonb('failure'),
  },
  (t) => [
    index('approval_requests_workspace_idx').on(t.workspaceId, t.id.desc()),
    // Pending ones first in the console, counted in its navigation.
    index('approval_requests_pending_idx').on(t.workspaceId).where(sql`${t.status} = 'pending'`),
    // The expiry sweep reads only pending requests past their time.
    index('approval_requests_expiry_idx').on(t.expiresAt).where(sql`${t.status} = 'pending'`),
    // One pending request per key and body: a retry answers the one that waits.
    uniqueIndex('approval_requests_pending_body_uq').on(t.requestedByKeyId, t.fingerprint).where(sql`${t.status} = 'pending'`),
    check('approval_requests_total', sql`${t.totalCents} >= 0`),
  ],
);
