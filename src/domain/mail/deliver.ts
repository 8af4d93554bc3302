import type { Db } from '../../db/handle.js';
import type { MailTransport, OutgoingMail, SendResult } from '../../outbound/smtp.js';

export interface MailSettings {
  /** One attempt, as a whole; the claim lapses this long (plus a margin) after it starts. */
  timeoutMs: number;
  /** The first retry's wait; each failure doubles it. */
  retryBaseMs: number;
  /** A mail still failing this long after its first attempt is given up. */
  giveUpMs: number;
}

/** Mails sent at once by one process, each on its own connection. */
const BATCH = 10;
/** A claimed attempt lapses this long after its timeout, if its process never recorded the outcome (it died). */
const CLAIM_MARGIN_MS = 5_000;
/** The longest wait between two attempts: a server back after a long outage gets the mail within the hour. */
const MAX_RETRY_MS = 3_600_000;

interface Claimed {
  id: number;
  kind: string;
  attempts: number;
  first_attempt_at: Date;
  to_address: string;
  subject: string;
  body_text: string;
  body_html: string;
  list_unsubscribe: string | null;
  message_id: string;
}

/** The wait before the next attempt: the base, doubling with each failure, plus up to a fifth more at random. */
export function mailRetryDelay(attempts: number, baseMs: number): number {
  const exact = Math.min(baseMs * 2 ** Math.min(attempts - 1, 40), MAX_RETRY_MS);
  return Math.round(exact * (1 + Math.random() * 0.2));
}

/** What the worker reports of each attempt, for its log: never the link nor the body. */
export interface MailAttempt {
  id: number;
  kind: string;
  attempts: number;
  outcome: 'sent' | 'logged' | 'retry' | 'failed';
  error?: string;
}

/**
 * Claims due mails and marks the attempt in one committed statement before sending, as webhook
 * deliveries do: another process skips them (SKIP LOCKED while claiming, then next_attempt_at is
 * past the attempt's timeout), and if this process dies mid-send the claim lapses and another
 * sends the mail again, with the same Message-ID. Then sends each and records the outcome; a sent
 * or given-up mail's parts and unsubscribe address are emptied (they may hold a token). Returns how many it attempted.
 */
export async function sendDueMail(
  pool: Db,
  transport: MailTransport,
  settings: MailSettings,
  now: () => number,
  report: (attempt: MailAttempt) => void = () => {},
): Promise<number> {
  const claimedAt = now();
  const { rows } = await pool.query<Claimed>({
    name: 'mail_outbox_claim',
    text: `WITH due AS (
             SELECT id FROM mail_outbox
              WHERE status = 'pending' AND next_attempt_at <= $1
              ORDER BY next_attempt_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED
           )
           UPDATE mail_outbox m
              SET attempts = m.attempts + 1, next_attempt_at = $2, last_attempt_at = $1,
                  first_attempt_at = COALESCE(m.first_attempt_at, $1)
             FROM due
            WHERE m.id = due.id
           RETURNING m.id, m.kind, m.attempts, m.first_attempt_at, m.to_address, m.subject, m.body_text, m.body_html, m.list_unsubscribe, m.message_id`,
    values: [new Date(claimedAt), new Date(claimedAt + settings.timeoutMs + CLAIM_MARGIN_MS)],
  });
  await Promise.all(rows.map((m) => attempt(pool, transport, settings, now, m, report)));
  return rows.length;
}

async function attempt(
  pool: Db,
  transport: MailTransport,
  settings: MailSettings,
  now: () => number,
  m: Claimed,
  report: (attempt: MailAttempt) => void,
): Promise<void> {
  const mail: OutgoingMail = {
    to: m.to_address,
    subject: m.subject,
    text: m.body_text,
    html: m.body_html,
    messageId: m.message_id,
    ...(m.list_unsubscribe ? { listUnsubscribe: m.list_unsubscribe } : {}),
  };
  let result: SendResult;
  try {
    result = await transport.send(mail);
  } catch (err) {
    // A transport that throws rather than answering is a failed attempt like any other.
    result = { ok: false, permanent: false, error: `could not send: ${err instanceof Error ? err.message : String(err)}`.slice(0, 300) };
  }
  const at = now();
  const givingUp = !result.ok && (result.permanent || at - m.first_attempt_at.getTime() >= settings.giveUpMs);
  const status = result.ok ? (transport.logsOnly ? 'logged' : 'sent') : givingUp ? 'failed' : 'pending';
  // Guarded by the attempt number: a claim that lapsed and was taken again is no longer ours to settle.
  await pool.query({
    name: 'mail_outbox_outcome',
    text: `UPDATE mail_outbox
              SET status = $3::mail_status, next_attempt_at = $4, last_error = $5,
                  sent_at = CASE WHEN $3::mail_status IN ('sent', 'logged') THEN $6 ELSE sent_at END,
                  body_text = CASE WHEN $3::mail_status = 'pending' THEN body_text END,
                  body_html = CASE WHEN $3::mail_status = 'pending' THEN body_html END,
                  list_unsubscribe = CASE WHEN $3::mail_status = 'pending' THEN list_unsubscribe END
            WHERE id = $1 AND attempts = $2 AND status = 'pending'`,
    values: [
      m.id,
      m.attempts,
      status,
      status === 'pending' ? new Date(at + mailRetryDelay(m.attempts, settings.retryBaseMs)) : null,
      result.ok ? null : result.error,
      new Date(at),
    ],
  });
  report({
    id: m.id,
    kind: m.kind,
    attempts: m.attempts,
    outcome: status === 'pending' ? 'retry' : status,
    ...(result.ok ? {} : { error: result.error }),
  });
}

/**
 * The transport without SMTP_URL: each mail becomes one log line with its recipient, subject and
 * links, which a person running the service on their own machine follows. The links are theirs
 * to see in that mode; with SMTP_URL set no link is ever logged.
 */
export function loggingTransport(write: (line: string) => void): MailTransport {
  return {
    logsOnly: true,
    async send(mail) {
      const links = [...new Set(mail.text.match(/\bhttps?:\/\/\S+/g) ?? [])];
      write(`mail to ${mail.to}: "${mail.subject}"${links.length ? ` ${links.join(' ')}` : ''} (not sent: SMTP_URL is not set)`);
      return { ok: true };
    },
    close() {},
  };
}
