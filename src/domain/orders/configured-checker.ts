import type { Db } from '../../db/handle.js';
import type { Config } from '../../config.js';
import { createOutboundClient } from '../../outbound/http-client.js';
import type { Clock } from '../clock.js';
import { durationsFrom } from './states.js';
import { createLinkChecker } from './link-checker.js';
import { checkPlacement } from '../placements/live-checks.js';
import { createPagePool } from '../placements/page-pool.js';

/** Where outbound requests (webhooks, link checks) may go, from the settings. */
export const outboundPolicyFor = (config: Config) => ({ allowLoopback: config.OUTBOUND_ALLOW_LOOPBACK, resolve: config.OUTBOUND_RESOLVE });

/**
 * The link checker as the settings make it (docs/link-guarantee.md), over an outbound client of
 * its own and a pool of threads that read the pages: the server's worker and re-checks, the CLI
 * and tests use the same. `close` ends the client's connections and the threads.
 */
export function configuredLinkChecker(config: Config, pool: Db, clock: Clock, onCheckError?: (err: unknown, orderId: number) => void) {
  const client = createOutboundClient(outboundPolicyFor(config));
  const pages = createPagePool();
  const checker = createLinkChecker({
    pool,
    clock,
    durations: durationsFrom(config),
    check: async (expected, pace) => (await checkPlacement(client, expected, config.LINK_CHECK_TIMEOUT_MS, { pace, read: pages.check })).checks,
    timeoutMs: config.LINK_CHECK_TIMEOUT_MS,
    perDomainPerSecond: config.LINK_CHECKS_PER_DOMAIN_PER_SECOND,
    ...(onCheckError ? { onCheckError } : {}),
  });
  return {
    checker,
    close: async () => {
      client.close();
      await pages.close();
    },
  };
}
