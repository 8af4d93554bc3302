import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type pg from 'pg';
import type { Clock } from '../domain/clock.js';
import { sequenceEvents } from '../domain/events/sequencer.js';
import { type DeliverySettings, deliverDue } from '../domain/webhooks/deliver.js';
import { type SecretBox, sealStoredSecrets } from '../domain/webhooks/secret-box.js';
import type { OutboundClient } from '../outbound/http-client.js';
import { repeatInBackground } from './repeat.js';

/**
 * Two loops, each every `intervalMs`: one positions newly committed events (and creates their
 * deliveries), the other sends the deliveries that are due, until none is left. They never wait
 * for each other: a backlog of deliveries that keep failing or hanging does not hold events out of
 * the feed. Every process may run both: the sequencer runs in one process at a time (an advisory
 * lock) and deliveries are claimed with SKIP LOCKED.
 */
export const eventWorker = fp(
  async function eventWorker(
    app: FastifyInstance,
    opts: { pool: pg.Pool; clock: Clock; intervalMs: number; client: OutboundClient; delivery: DeliverySettings; secrets: SecretBox },
  ) {
    app.addHook('onClose', async () => opts.client.close());
    if (opts.intervalMs <= 0) return;
    const now = () => opts.clock.now();
    repeatInBackground(app, opts.intervalMs, 'event sequencer', async () => {
      await sequenceEvents(opts.pool, now());
    });
    // Secrets kept in plain text before (or sealed with the stored key before SECRETS_KEY was
    // set) are sealed with the current key once per process start; until then they sign as read.
    let sealed = false;
    repeatInBackground(app, opts.intervalMs, 'event worker', async (stopping) => {
      if (!sealed) {
        const { unreadable } = await sealStoredSecrets(opts.pool, opts.secrets);
        if (unreadable > 0) app.log.warn({ unreadable }, 'webhook signing secrets no key opens: was SECRETS_KEY changed or unset?');
        sealed = true;
      }
      // Any delivery claimed means more may be due at once; none, that the rest waits for later.
      while ((await deliverDue(opts.pool, opts.client, opts.delivery, now, opts.secrets)) > 0 && !stopping());
    });
  },
  { name: 'event-worker' },
);
