import type pg from 'pg';
import { afterAll } from 'vitest';
import { placementCheckerFor } from '../../src/app.js';
import { durationsFrom } from '../../src/domain/orders/states.js';
import { createLinkChecker } from '../../src/domain/placements/link-checker.js';
import type { Harness } from './app.js';

/**
 * The link checker as the server runs it (real fetches through the outbound client, the app's
 * settings and clock), for a test to drive one round at a time. `pool`: another connection pool,
 * standing for another process.
 */
export function linkCheckerFor(h: Harness, pool: pg.Pool = h.database.pool) {
  const placement = placementCheckerFor(h.config);
  afterAll(() => placement.close());
  return createLinkChecker({
    pool,
    clock: h.clock,
    durations: durationsFrom(h.config),
    check: placement.check,
    timeoutMs: h.config.LINK_CHECK_TIMEOUT_MS,
    perDomainPerSecond: h.config.LINK_CHECKS_PER_DOMAIN_PER_SECOND,
  });
}
