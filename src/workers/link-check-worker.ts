import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { LINK_CHECK_CONCURRENCY, type LinkChecker } from '../domain/orders/link-checker.js';

/**
 * Every `intervalMs`, claims the link checks that are due (first checks of new placements,
 * re-checks in guarantee windows) while fewer than LINK_CHECK_CONCURRENCY are in flight, and runs
 * each on its own: a page that takes its whole timeout holds up no other check, so a new
 * placement is checked within a poll interval of its publication. Every process may run it:
 * checks are claimed with SKIP LOCKED and applied only while the claim stands.
 */
export const linkCheckWorker = fp(
  async function linkCheckWorker(app: FastifyInstance, opts: { checker: LinkChecker; intervalMs: number }) {
    if (opts.intervalMs <= 0) return;
    const inFlight = new Set<Promise<unknown>>();
    let claiming: Promise<void> | null = null;
    let closing = false;
    let timer: NodeJS.Timeout | undefined;

    const claim = async () => {
      for (;;) {
        const room = LINK_CHECK_CONCURRENCY - inFlight.size;
        if (room <= 0 || closing) return;
        const claimed = await opts.checker.claimDue(room);
        for (const c of claimed) {
          const running: Promise<unknown> = opts.checker
            .checkClaimed(c)
            // Its lease ends and the check runs again.
            .catch((err) => app.log.warn({ err: (err as Error).message, orderId: c.id }, 'link check failed'))
            .finally(() => inFlight.delete(running));
          inFlight.add(running);
        }
        if (claimed.length < room) return;
      }
    };
    const tick = () => {
      if (claiming) return;
      claiming = claim()
        .catch((err) => app.log.warn({ err: (err as Error).message }, 'link checks failed'))
        .finally(() => {
          claiming = null;
        });
    };
    app.addHook('onReady', async () => {
      timer = setInterval(tick, opts.intervalMs);
      timer.unref();
    });
    app.addHook('preClose', async () => {
      closing = true;
      clearInterval(timer);
      await claiming;
      await Promise.all(inFlight);
    });
  },
  { name: 'link-check-worker', dependencies: ['link-checker'] },
);
