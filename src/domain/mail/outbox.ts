import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/handle.js';
import type { ComposedMail } from './compose.js';

/**
 * What a mail is. One mail per kind, subject and address: the subject is what the mail is about
 * (the link's token row, the invitation; a notification's event), so writing the same mail twice
 * (a retried transaction, two processes reacting to one event) queues it once.
 */
export const mailKinds = ['verify_email', 'reset_password', 'invitation'] as const;
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
    text: `INSERT INTO mail_outbox (kind, subject_id, user_id, to_address, subject, body_text, body_html, message_id, next_attempt_at, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)
           ON CONFLICT (kind, subject_id, lower(to_address)) DO NOTHING`,
    values: [mail.kind, mail.subjectId, mail.userId, mail.to, mail.subject, mail.text, mail.html, `<${randomUUID()}@${messageIdDomain(site)}>`, new Date(now)],
  });
  return (rowCount ?? 0) > 0;
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
