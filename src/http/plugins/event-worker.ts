import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type pg from 'pg';
import type { Clock } from '../../domain/clock.js';
import { sequenceEvents } from '../../domain/events/sequencer.js';
import { type DeliverySettings, deliverDue } from '../../domain/webhooks/deliver.js';
import type { OutboundClient } from '../../outbound/http-client.js';

/**
 * Every `intervalMs`, positions newly committed events (and creates their deliveries), then sends
 * the deliveries that are due, until none is left. Every process may run it: the sequencer runs
 * in one process at a time (an advisory lock) and deliveries are claimed with SKIP LOCKED.
 */
export const eventWorker = fp(
  async function eventWorker(
    app: FastifyInstance,
    opts: { pool: pg.Pool; clock: Clock; intervalMs: number; client: OutboundClient; delivery: DeliverySettings },
  ) {
    app.addHook('onClose', async () => opts.client.close());
    if (opts.intervalMs <= 0) return;
    let timer: NodeJS.Timeout | undefined;
    let running: Promise<unknown> = Promise.resolve();
    let busy = false;
    const now = () => opts.clock.now();
    const work = async () => {
      await sequenceEvents(opts.pool, now());
      // A full batch means more may be due at once; a short one, that the rest waits for later.
      while ((await deliverDue(opts.pool, opts.client, opts.delivery, now)) > 0 && !closing);
    };
    let closing = false;
    const tick = () => {
      if (busy) return;
      busy = true;
      running = work()
        .catch((err) => app.log.warn({ err: (err as Error).message }, 'event worker failed'))
        .finally(() => {
          busy = false;
        });
    };
    app.addHook('onReady', async () => {
      timer = setInterval(tick, opts.intervalMs);
      timer.unref();
    });
    app.addHook('preClose', async () => {
      closing = true;
      clearInterval(timer);
      await running;
    });
  },
  { name: 'event-worker' },
);
