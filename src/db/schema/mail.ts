import { sql } from 'drizzle-orm';
import { bigint, bigserial, index, integer, pgEnum, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { mailStatuses } from '../../common/enums.js';
import { users } from './users.js';

export const mailStatus = pgEnum('mail_status', mailStatuses);

/**
 * The mail outbox (docs/mail.md): a row per mail, written in the transaction of what it tells,
 * sent by the mail worker of any process. One mail per kind, subject (the token, the invitation,
 * later the event) and address: a second insert of the same is a no-op.
 */
export const mailOutbox = pgTable(
  'mail_outbox',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    /** What the mail is (`verify_email`, `reset_password`, `invitation`…): text, so a new kind needs no migration. */
    kind: text('kind').notNull(),
    subjectId: bigint('subject_id', { mode: 'number' }).notNull(),
    /** The person it goes to, when the address has an account (an invitation's may not). */
    userId: integer('user_id').references(() => users.id, { onDelete: 'cascade' }),
    toAddress: text('to_address').notNull(),
    subject: text('subject').notNull(),
    /** The parts as sent; emptied once the mail is sent or given up, since they may hold a link's token. */
    bodyText: text('body_text'),
    bodyHtml: text('body_html'),
    /**
     * A notification's one-click unsubscribe address (RFC 8058: the List-Unsubscribe header);
     * emptied with the parts, since it carries a signed token.
     */
    listUnsubscribe: text('list_unsubscribe'),
    /** The same on every attempt, so a receiver can drop a mail sent twice. */
    messageId: text('message_id').notNull(),
    status: mailStatus('status').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    // When a pending mail is due; while an attempt is in flight, when its claim lapses.
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }),
    firstAttemptAt: timestamp('first_attempt_at', { withTimezone: true }),
    lastAttemptAt: timestamp('last_attempt_at', { withTimezone: true }),
    lastError: text('last_error'),
    sentAt: timestamp('sent_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    uniqueIndex('mail_outbox_once_uq').on(t.kind, t.subjectId, sql`lower(${t.toAddress})`),
    // What the worker polls: due pending mails only.
    index('mail_outbox_due_idx').on(t.nextAttemptAt).where(sql`${t.status} = 'pending'`),
    index('mail_outbox_user_idx').on(t.userId),
    index('mail_outbox_created_idx').on(t.createdAt),
  ],
);
