import { createTransport } from 'nodemailer';

/** One mail as the outbox hands it over; the transport adds From. */
export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** `<…@…>`, the same on every attempt of the mail. */
  messageId: string;
  /** A notification's one-click unsubscribe address: List-Unsubscribe and List-Unsubscribe-Post (RFC 8058). */
  listUnsubscribe?: string;
}

/**
 * What became of one attempt. `permanent`: the server refused this mail or its recipient (a 5xx
 * answer to the envelope or the message), so sending it again would be refused again.
 */
export type SendResult = { ok: true } | { ok: false; permanent: boolean; error: string };

export interface MailTransport {
  send(mail: OutgoingMail): Promise<SendResult>;
  close(): void;
  /** A transport that writes each mail to the log instead of sending it (no SMTP_URL): its mails are marked `logged`. */
  logsOnly?: boolean;
}

/**
 * An error's text as it may be stored and logged: never a link (a server may quote the message,
 * whose links carry tokens) nor the SMTP password, cut to 300 characters.
 */
export function scrubbedError(err: unknown, secrets: string[] = []): string {
  let text = err instanceof Error ? err.message : String(err);
  for (const secret of secrets) if (secret.length >= 3) text = text.split(secret).join('[REDACTED]');
  return text.replace(/\bhttps?:\/\/\S+/gi, '[link]').slice(0, 300);
}

/**
 * Mail over SMTP with nodemailer, from `SMTP_URL` (smtp:// upgrades with STARTTLS when offered,
 * smtps:// is TLS from the start). One connection per mail: the outbox sends a few at a time.
 * Each attempt is bounded by `timeoutMs` as a whole (an AbortSignal), so it ends before its claim
 * in the outbox lapses.
 */
export function createSmtpTransport(opts: { url: string; from: string; timeoutMs: number }): MailTransport {
  const url = new URL(opts.url);
  const secrets = [url.password, decodeURIComponent(url.password)].filter(Boolean);
  const transporter = createTransport(
    {
      url: opts.url,
      connectionTimeout: opts.timeoutMs,
      greetingTimeout: opts.timeoutMs,
      socketTimeout: opts.timeoutMs,
      // nodemailer's own logging stays off: it would write the conversation, AUTH included.
      logger: false,
      debug: false,
    },
    { from: opts.from },
  );
  return {
    async send(mail) {
      try {
        await transporter.sendMail({
          to: mail.to,
          subject: mail.subject,
          text: mail.text,
          html: mail.html,
          messageId: mail.messageId,
          // RFC 8058 one-click unsubscribe: nodemailer writes `List-Unsubscribe: <url>`; the
          // -Post header tells the mail client it may POST to it without opening a page.
          ...(mail.listUnsubscribe ? { list: { unsubscribe: mail.listUnsubscribe } } : {}),
          headers: {
            // RFC 3834: written by a program, so auto-responders do not answer it.
            'Auto-Submitted': 'auto-generated',
            ...(mail.listUnsubscribe ? { 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' } : {}),
          },
          signal: AbortSignal.timeout(opts.timeoutMs),
        });
        return { ok: true };
      } catch (err) {
        const { code, responseCode } = err as { code?: string; responseCode?: number };
        const permanent = typeof responseCode === 'number' && responseCode >= 500 && (code === 'EENVELOPE' || code === 'EMESSAGE');
        return { ok: false, permanent, error: scrubbedError(err, secrets) };
      }
    },
    close() {
      transporter.close();
    },
  };
}
