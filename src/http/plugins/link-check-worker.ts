import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { LinkChecker } from '../../domain/placements/link-checker.js';
import { repeatInBackground } from './repeat.js';

/**
 * Every `intervalMs`, runs the link checks that are due (first checks of new placements,
 * re-checks in guarantee windows) until a round finds none. Every process may run it: checks are
 * claimed with SKIP LOCKED and applied only while the claim stands.
 */
export const linkCheckWorker = fp(
  async function linkCheckWorker(app: FastifyInstance, opts: { checker: LinkChecker; intervalMs: number }) {
    if (opts.intervalMs <= 0) return;
    repeatInBackground(app, opts.intervalMs, 'link checks', async (stopping) => {
      while ((await opts.checker.runDue()) > 0 && !stopping());
    });
  },
  { name: 'link-check-worker' },
);
