import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type pg from 'pg';
import type { Clock } from '../../domain/clock.js';
import { configuredLinkChecker } from '../../domain/orders/configured-checker.js';
import type { LinkChecker } from '../../domain/orders/link-checker.js';

/** The settings the checker reads (the app's configuration), named without importing it: http sits below config. */
type CheckerSettings = Parameters<typeof configuredLinkChecker>[0];

declare module 'fastify' {
  interface FastifyInstance {
    /** The link checker of this app: the publisher's re-check, the console's and the link-check worker share it. */
    linkChecker: LinkChecker;
  }
}

/**
 * The link checker, made once on the app's pool and settings, with its outbound client and the
 * threads that read pages; both are closed when the app closes (after the link-check worker has
 * stopped and awaited its checks, which it does before any plugin closes).
 */
export const linkCheckerPlugin = fp(
  async function linkCheckerPlugin(app: FastifyInstance, opts: { config: CheckerSettings; pool: pg.Pool; clock: Clock }) {
    const { checker, close } = configuredLinkChecker(opts.config, opts.pool, opts.clock, (err, orderId) =>
      app.log.error({ err, orderId }, 'link check failed to run'),
    );
    app.addHook('onClose', async () => close());
    app.decorate('linkChecker', checker);
  },
  { name: 'link-checker' },
);
