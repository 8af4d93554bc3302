import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type pg from 'pg';
import type { Clock } from '../../domain/clock.js';
import type { Durations } from '../../domain/orders/states.js';
import { sweepDeadlines } from '../../domain/orders/sweep.js';

/**
 * Runs the deadline sweep every `intervalMs` inside the server. Every process may run it: the
 * sweep claims orders with SKIP LOCKED and re-checks each under its lock.
 */
export const deadlineSweeper = fp(
  async function deadlineSweeper(app: FastifyInstance, opts: { pool: pg.Pool; clock: Clock; durations: Durations; intervalMs: number }) {
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
          if (r.expired || r.auto_approved || r.drafts_auto_approved) app.log.info(r, 'deadline sweep');
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
