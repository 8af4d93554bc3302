import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/handle.js';
import type { ComposedMail } from './compose.js';

/**
 * What a mail is. One mail per kind, subject and address: the subject is what the mail is about
 * (the link's token row, the invitation; a notification's event), so writing the same mail twice
 * (a retried transaction, two processes reacting to one event) queues it once.
 */
/** The notifications' kinds (who gets each: src/domain/notifications/kinds.ts), listed once, here, as mail kinds. */
export const notificationMailKinds = [
  'order_to_accept',
  'content_in',
  'draft_ready',
  'placement_live',
  'link_lost',
  'approval_request',
  'deadline_reminder',
  'budget_exhausted',
  'webhook_disabled',
  'key_expiring',
  'funds_added',
  'payout_requested',
  'payout_sent',
  'payout_failed',
] as const;

export const mailKinds = [
  'verify_email',
  'reset_password',
  'invitation',
  // The link that finishes joining through an invitation, signed out (invitations.ts): the subject is the link's end, in seconds.
  'invitation_proof',
  // Notifications (src/domain/notifications/kinds.ts): one per event, or reminder, and person.
  ...notificationMailKinds,
  // A person's daily digest of the notifications set to it: the subject is the day.
  'digest',
] as const;
export type MailKind = (typeof mailKinds)[number];

/** Where a mail's links point: the console's absolute address (`consoleBaseUrl`). */
export interface MailSite {
  baseUrl: string;
}

export interface NewMail extends ComposedMail {
  kind: MailKind;
  subjectId: number;
  /** The person it goes to, when the address has an account. */
  userId: number | null;
  to: string;
  /** A notification's one-click unsubscribe address (RFC 8058), sent as List-Unsubscribe. */
  listUnsubscribe?: string;
}

/** A Message-ID's right-hand side: the console's host name, or localhost for an address given as an IP. */
function messageIdDomain(site: MailSite): string {
  const host = new URL(site.baseUrl).hostname;
  return /[a-z]/i.test(host) && !host.includes(':') && !host.startsWith('[') ? host : 'localhost';
}

/**
 * Queues a mail, on the pool or in the caller's transaction (so it exists if and only if what it
 * tells committed). Due at once; the mail worker sends it. Answers false when the same mail was
 * already queued.
 */
export async function enqueueMail(q: Pick<Db, 'query'>, site: MailSite, mail: NewMail, now: number): Promise<boolean> {
  const { rowCount } = await q.query({
    name: 'mail_outbox_enqueue',
    text: `INSERT INTO mail_outbox (kind, subject_id, user_id, to_address, subject, body_text, body_html, list_unsubscribe, message_id, next_attempt_at, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)
           ON CONFLICT (kind, subject_id, lower(to_address)) DO NOTHING`,
    values: [
      mail.kind,
      mail.subjectId,
      mail.userId,
      mail.to,
      mail.subject,
      mail.text,
      mail.html,
      mail.listUnsubscribe ?? null,
      `<${randomUUID()}@${messageIdDomain(site)}>`,
      new Date(now),
    ],
  });
  return (rowCount ?? 0) > 0;
}

/**
 * Queues several mails in one statement (a batch of notifications), each as `enqueueMail` would:
 * a mail already queued is left as it is. Answers how many were new.
 */
export async function enqueueMails(q: Pick<Db, 'query'>, site: MailSite, mails: NewMail[], now: number): Promise<number> {
  if (mails.length === 0) return 0;
  const domain = messageIdDomain(site);
  const rows = mails.map((m) => ({
    kind: m.kind,
    subject_id: m.subjectId,
    user_id: m.userId,
    to_address: m.to,
    subject: m.subject,
    body_text: m.text,
    body_html: m.html,
    list_unsubscribe: m.listUnsubscribe ?? null,
    message_id: `<${randomUUID()}@${domain}>`,
  }));
  const { rowCount } = await q.query({
    name: 'mail_outbox_enqueue_many',
    text: `INSERT INTO mail_outbox (kind, subject_id, user_id, to_address, subject, body_text, body_html, list_unsubscribe, message_id, next_attempt_at, created_at)
           SELECT m.kind, m.subject_id, m.user_id, m.to_address, m.subject, m.body_text, m.body_html, m.list_unsubscribe, m.message_id, $2, $2
             FROM jsonb_to_recordset($1::jsonb) AS m(kind text, subject_id bigint, user_id int, to_address text, subject text, body_text text, body_html text, list_unsubscribe text, message_id text)
           ON CONFLICT (kind, subject_id, lower(to_address)) DO NOTHING`,
    values: [JSON.stringify(rows), new Date(now)],
  });
  return rowCount ?? 0;
}

/**
 * Deletes mails sent, logged or given up more than `retentionDays` ago, a batch at a time. Kept
 * that long because the row is what makes a second mail for the same subject a no-op.
 */
export async function purgeOldMail(db: Db, now: number, retentionDays: number): Promise<number> {
  const { rowCount } = await db.query({
    name: 'mail_outbox_purge',
    text: `DELETE FROM mail_outbox WHERE id IN (
             SELECT id FROM mail_outbox WHERE status <> 'pending' AND created_at < $1 LIMIT 1000)`,
    values: [new Date(now - retentionDays * 86_400_000)],
  });
  return rowCount ?? 0;
}
