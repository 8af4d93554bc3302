import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type pg from 'pg';
import type { Clock } from '../domain/clock.js';
import type { MailSite } from '../domain/mail/outbox.js';
import { type FromEventsResult, notifyFromEvents, startNotificationCursor } from '../domain/notifications/from-events.js';
import { repeatInBackground } from './repeat.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Turns the events positioned since the last run into notifications (tests drive it). */
    notifier: { drain(): Promise<FromEventsResult> };
  }
}

/**
 * Every `intervalMs`, reads the event feed past the notifications' cursor and queues the mails
 * (and digest lines) the new events make (docs/mail.md); the mail worker sends them. In the
 * background, apart from the changes themselves: placing an order does no more work for it.
 * Every process may run it: one at a time holds the cursor, the others skip their turn.
 */
export const notificationWorker = fp(
  async function notificationWorker(app: FastifyInstance, opts: { pool: pg.Pool; clock: Clock; intervalMs: number; site: MailSite }) {
    // The cursor starts at the feed's newest event the first time any process starts with it:
    // when the app is ready, so what happens from then on is told. A database away at that moment
    // does not stop the start (readiness reports it); the first run makes the cursor instead.
    let started = false;
    const start = async () => {
      if (started) return;
      await startNotificationCursor(opts.pool, opts.clock.now());
      started = true;
    };
    app.addHook('onReady', async () => {
      await start().catch((err) => app.log.warn({ err: (err as Error).message }, 'the notifications cursor could not be made yet; the first run will'));
    });
    const drain = async () => {
      await start();
      return notifyFromEvents(opts.pool, opts.site, opts.clock.now());
    };
    app.decorate('notifier', { drain });
    if (opts.intervalMs <= 0) return;
    repeatInBackground(app, opts.intervalMs, 'notifications', async () => {
      const r = await drain();
      if (r.mails || r.digested) app.log.info({ events: r.events, mails: r.mails, digested: r.digested }, 'notifications queued');
    });
  },
  { name: 'notification-worker' },
);
