import type pg from 'pg';
import { afterAll } from 'vitest';
import { configuredLinkChecker } from '../../src/domain/orders/configured-checker.js';
import type { Harness } from './app.js';

/**
 * The link checker as the server runs it (real fetches, the app's settings and clock), for a test
 * to drive one round at a time. `pool`: another connection pool, standing for another process.
 */
export function linkCheckerFor(h: Harness, pool: pg.Pool = h.database.pool) {
  const { checker, close } = configuredLinkChecker(h.config, pool, h.clock);
  afterAll(close);
  return checker;
}
