import { bigint, bigserial, index, integer, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { users } from './users.js';

/**
 * How far a reader of the event feed has got, by name: the position of the last event it has
 * handled (the notifications' cursor, docs/mail.md). Moved in the transaction that handles the
 * events, by one process at a time (the row's lock).
 */
export const eventCursors = pgTable('event_cursors', {
  name: text('name').primaryKey(),
  position: bigint('position', { mode: 'number' }).notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
});

/**
 * The reminders that are not events (a deadline 24 h away, a key expiring within 7 days), one
 * per kind, subject and moment: the order and its deadline, the key and its expiry. The row is
 * the subject of their mails in the outbox, so a reminder is queued once per person whatever the
 * number of processes sweeping, and a deadline set again later (a revised draft) is a new one.
 */
export const notificationReminders = pgTable(
  'notification_reminders',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    kind: text('kind').notNull(),
    subjectId: bigint('subject_id', { mode: 'number' }).notNull(),
    subjectAt: timestamp('subject_at', { withTimezone: true }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  },
  (t) => [uniqueIndex('notification_reminders_once_uq').on(t.kind, t.subjectId, t.subjectAt), index('notification_reminders_created_idx').on(t.createdAt)],
);

/**
 * Notifications waiting for a person's daily digest (a kind set to "Daily digest"): one line
 * each, with its link, until the digest is queued. One per kind, subject and person, like the
 * mails they stand for.
 */
export const notificationDigestItems = pgTable(
  'notification_digest_items',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    // The membership the notification came through (copies, as in events): its setting is read
    // again when the digest is written, so a kind turned off since is left out.
    workspaceId: integer('workspace_id'),
    publisherId: integer('publisher_id'),
    kind: text('kind').notNull(),
    subjectId: bigint('subject_id', { mode: 'number' }).notNull(),
    /** For an order's notification: the order and the state it needed the person in; a step taken since drops the line. */
    orderId: bigint('order_id', { mode: 'number' }),
    orderStatus: text('order_status'),
    line: text('line').notNull(),
    url: text('url').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    uniqueIndex('notification_digest_items_once_uq').on(t.kind, t.subjectId, t.userId),
    index('notification_digest_items_user_idx').on(t.userId, t.createdAt),
    index('notification_digest_items_created_idx').on(t.createdAt),
  ],
);
