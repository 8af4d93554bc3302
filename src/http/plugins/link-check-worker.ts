import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { LinkChecker } from '../../domain/placements/link-checker.js';

/**
 * Every `intervalMs`, runs the link checks that are due (first checks of new placements,
 * re-checks in guarantee windows) until a round finds fewer than a batch. Every process may run
 * it: checks are claimed with SKIP LOCKED and applied only while the claim stands.
 */
export const linkCheckWorker = fp(
  async function linkCheckWorker(app: FastifyInstance, opts: { checker: LinkChecker; intervalMs: number }) {
    if (opts.intervalMs <= 0) return;
    let timer: NodeJS.Timeout | undefined;
    let running: Promise<unknown> = Promise.resolve();
    let busy = false;
    let closing = false;
    const work = async () => {
      while ((await opts.checker.runDue()) > 0 && !closing);
    };
    const tick = () => {
      if (busy) return;
      busy = true;
      running = work()
        .catch((err) => app.log.warn({ err: (err as Error).message }, 'link checks failed'))
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
  { name: 'link-check-worker' },
);
