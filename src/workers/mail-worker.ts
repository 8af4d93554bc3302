import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type pg from 'pg';
import type { Clock } from '../domain/clock.js';
import { type MailAttempt, type MailSettings, sendDueMail } from '../domain/mail/deliver.js';
import type { MailTransport } from '../outbound/smtp.js';
import { repeatInBackground } from './repeat.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Sends every mail due now, until none is left; answers how many it attempted (tests drive it). */
    mailWorker: { drain(): Promise<number> };
  }
}

/**
 * Every `intervalMs`, sends the outbox's due mails (docs/mail.md) until none is left. Every
 * process may run it: mails are claimed with SKIP LOCKED and a claim that lapses. Its log names a
 * mail by id and kind, never its links: with SMTP on, they carry tokens.
 */
export const mailWorker = fp(
  async function mailWorker(
    app: FastifyInstance,
    opts: { pool: pg.Pool; clock: Clock; intervalMs: number; transport: MailTransport; settings: MailSettings },
  ) {
    const now = () => opts.clock.now();
    const report = (a: MailAttempt) => {
      const fields = { mail_id: a.id, kind: a.kind, attempts: a.attempts, ...(a.error ? { error: a.error } : {}) };
      if (a.outcome === 'sent') app.log.info(fields, 'mail sent');
      else if (a.outcome === 'retry') app.log.warn(fields, 'mail not sent; it will be tried again');
      else if (a.outcome === 'failed') app.log.error(fields, 'mail given up');
    };
    const drain = async (stopping: () => boolean = () => false) => {
      let total = 0;
      for (;;) {
        // Any mail claimed means more may be due at once; none, that the rest waits for later.
        const n = await sendDueMail(opts.pool, opts.transport, opts.settings, now, report);
        total += n;
        if (n === 0 || stopping()) return total;
      }
    };
    app.decorate('mailWorker', { drain: () => drain() });
    app.addHook('onClose', async () => opts.transport.close());
    if (opts.intervalMs <= 0) return;
    repeatInBackground(app, opts.intervalMs, 'mail worker', async (stopping) => {
      await drain(stopping);
    });
  },
  { name: 'mail-worker' },
);
