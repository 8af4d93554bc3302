import { z } from 'zod';
import { durationsFrom } from '../../domain/orders/states.js';
import { sweepDeadlines } from '../../domain/orders/sweep.js';
import { systemClock } from '../../domain/clock.js';
import { configuredLinkChecker } from '../../domain/orders/configured-checker.js';
import { readFlags } from '../args.js';
import { expireApprovals } from '../../domain/approvals/expiry.js';
import { consoleBaseUrl } from '../../config.js';
import { purgeUnusedClients } from '../../domain/oauth/store.js';
import type { Commands } from '../registry.js';

export const orderCommands: Commands = {
  /** The same sweep the server runs every minute; safe to run beside it. */
  'orders sweep': async ({ pool, config }, raw) => {
    readFlags(z.object({}).strict(), raw);
    const now = Date.now();
    const orders = await sweepDeadlines(pool, now, durationsFrom(config));
    const approvals = await expireApprovals(pool, now, consoleBaseUrl(config));
    return { ...orders, approvals_expired: approvals, oauth_clients_deleted: await purgeUnusedClients(pool, now, config.OAUTH_UNUSED_CLIENT_HOURS) };
  },

  /**
   * The link checks that are due, run until none is left, as the server's worker runs them; safe
   * beside it. For deployments that run no checker in the server (LINK_CHECK_POLL_MS=0).
   */
  'orders check-links': async ({ pool, config }, raw) => {
    readFlags(z.object({}).strict(), raw);
    const { checker, close } = configuredLinkChecker(config, pool, systemClock);
    try {
      let checked = 0;
      for (let n = await checker.runDue(); n > 0; n = await checker.runDue()) checked += n;
      return { checked };
    } finally {
      await close();
    }
  },
};
