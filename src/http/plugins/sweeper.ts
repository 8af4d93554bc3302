import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type pg from 'pg';
import type { Clock } from '../../domain/clock.js';
import type { Durations } from '../../domain/orders/states.js';
import { sweepDeadlines } from '../../domain/orders/sweep.js';
import { purgeOldEvents } from '../../domain/events/feed.js';

/**
 * Runs the deadline sweep every `intervalMs` inside the server, then deletes events past their
 * retention. Every process may run it: the sweep claims orders with SKIP LOCKED and re-checks
 * each under its lock, and deleting the same old events twice deletes them once.
 */
export const deadlineSweeper = fp(
  async function deadlineSweeper(app: FastifyInstance, opts: { pool: pg.Pool; clock: Clock; durations: Durations; intervalMs: number; eventRetentionDays: number }) {
    if (opts.intervalMs <= 0) return;
    let timer: NodeJS.Timeout | undefined;
    let running: Promise<unknown> = Promise.resolve();
    let busy = false;
    const tick = () => {
      // A sweep that outlasts the interval is not joined by another from this process.
      if (busy) return;
      busy = true;
      running = sweepDeadlines(opts.pool, opts.clock.now(), opts.durations)
        .then((r) => {
          if (Object.values(r).some((n) => n > 0)) app.log.info(r, 'deadline sweep');
          return purgeOldEvents(opts.pool, opts.clock.now(), opts.eventRetentionDays);
        })
        .then((purged) => {
          if (purged) app.log.info({ purged }, 'old events deleted');
        })
        .catch((err) => app.log.warn({ err: (err as Error).message }, 'deadline sweep failed'))
        .finally(() => {
          busy = false;
        });
    };
    app.addHook('onReady', async () => {
      timer = setInterval(tick, opts.intervalMs);
      timer.unref();
    });
    app.addHook('onClose', async () => {
      clearInterval(timer);
      await running;
    });
  },
  { name: 'deadline-sweeper' },
);
