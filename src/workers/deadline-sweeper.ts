import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type pg from 'pg';
import type { Clock } from '../domain/clock.js';
import type { Durations } from '../domain/orders/states.js';
import { sweepDeadlines } from '../domain/orders/sweep.js';
import { expireApprovals } from '../domain/approvals/expiry.js';
import { purgeOldEvents } from '../domain/events/feed.js';
import { purgeOldMail } from '../domain/mail/outbox.js';
import { purgeOldLinks } from '../domain/users/address-links.js';
import { purgeUnusedClients } from '../domain/oauth/store.js';
import type { MailSite } from '../domain/mail/outbox.js';
import { purgeOldReminders } from '../domain/notifications/reminders.js';
import { sweepNotifications } from '../domain/notifications/sweep.js';
import { repeatInBackground } from './repeat.js';

/**
 * Runs the deadline sweep every `intervalMs` inside the server (orders, then approval requests
 * past their time), then the notifications of the clock (deadlines 24 h away, keys expiring
 * within 7 days, the daily digests: docs/mail.md), then deletes events past their retention,
 * mails and reminder records as old (a mail's row is what keeps a second one for the same event
 * from being sent), mailed links past their end and OAuth clients registered
 * `oauthUnusedClientHours` ago that nobody connected. Every process may run it: the sweep claims
 * orders with SKIP LOCKED and re-checks each under its lock, a reminder is recorded once per
 * subject and moment, and deleting the same rows twice deletes them once.
 */
export const deadlineSweeper = fp(
  async function deadlineSweeper(app: FastifyInstance, opts: {
      pool: pg.Pool;
      clock: Clock;
      durations: Durations;
      intervalMs: number;
      eventRetentionDays: number;
      approvalBaseUrl: string;
      site: MailSite;
      digestHourUtc: number;
      oauthUnusedClientHours?: number;
    },) {
    if (opts.intervalMs <= 0) return;
    repeatInBackground(app, opts.intervalMs, 'deadline sweep', async () => {
      const r = await sweepDeadlines(opts.pool, opts.clock.now(), opts.durations);
      const approvals = await expireApprovals(opts.pool, opts.clock.now(), opts.approvalBaseUrl);
      if (Object.values(r).some((n) => n > 0) || approvals > 0) app.log.info({ ...r, approvals_expired: approvals }, 'deadline sweep');
      const notified = await sweepNotifications(opts.pool, opts.site, opts.clock.now(), opts.digestHourUtc);
      if (Object.values(notified).some((n) => n > 0)) app.log.info(notified, 'notifications of the clock queued');
      const purged = await purgeOldEvents(opts.pool, opts.clock.now(), opts.eventRetentionDays);
      if (purged) app.log.info({ purged }, 'old events deleted');
      const mails = await purgeOldMail(opts.pool, opts.clock.now(), opts.eventRetentionDays);
      const links = await purgeOldLinks(opts.pool, opts.clock.now());
      const reminders = await purgeOldReminders(opts.pool, opts.clock.now(), opts.eventRetentionDays);
      if (mails || links || reminders) app.log.info({ mails, links, reminders }, 'old mails, links and reminders deleted');
      if (opts.oauthUnusedClientHours !== undefined) {
        const clients = await purgeUnusedClients(opts.pool, opts.clock.now(), opts.oauthUnusedClientHours);
        if (clients) app.log.info({ clients }, 'unused OAuth clients deleted');
      }
    });
  },
  { name: 'deadline-sweeper' },
);
