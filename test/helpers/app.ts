import { Writable } from 'node:stream';
import type { Redis } from 'ioredis';
import { afterAll } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { Metrics } from '../../src/infra/metrics.js';
import { type Config, defaultConfig } from '../../src/config.js';
import { testPasswordConfig } from './password-cost.js';
import { ManualClock } from './clock.js';
import { createLogger } from '../../src/logger.js';
import { createTestDatabase, type TestDatabase } from './db.js';

export type TestApp = Awaited<ReturnType<typeof buildApp>>;

export interface Harness {
  app: TestApp;
  database: TestDatabase;
  clock: ManualClock;
  config: Config;
  /** Every log line written so far, raw. */
  logs: string[];
}

/** Builds the real app on a private database; closed after the file's tests. */
export async function setupApp(
  overrides: Partial<Config> = {},
  opts: { database?: TestDatabase; redis?: Redis; metrics?: Metrics; clock?: ManualClock; searchLoaded?: boolean } = {},
): Promise<Harness> {
  const database = opts.database ?? (await createTestDatabase());
  // The deadline sweep, the event and mail workers and the link checker are driven explicitly in tests, with the injected clock.
  const config = defaultConfig({ ...testPasswordConfig, LOG_LEVEL: 'info', ORDER_SWEEP_INTERVAL_MS: 0, EVENTS_POLL_INTERVAL_MS: 0, MAIL_POLL_INTERVAL_MS: 0, LINK_CHECK_POLL_MS: 0, LINK_CHECK_TIMEOUT_MS: 2_000, ...overrides });
  const clock = opts.clock ?? new ManualClock(Date.now());
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk));
      cb();
    },
  });
  const app = await buildApp({
    config,
    database,
    logger: createLogger(config.LOG_LEVEL, sink),
    clock,
    ...(opts.redis ? { redis: opts.redis } : {}),
    ...(opts.metrics ? { metrics: opts.metrics } : {}),
  });
  await app.ready();
  // Searches answer 503 while the search index loads: tests start once it is loaded (unless they
  // look at that state themselves).
  // A hang detector, not a speed check: a database that never answers fails here, not by hanging the run.
  if (opts.searchLoaded !== false) {
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('the search index did not load within 120 s (pass searchLoaded: false if it cannot)')), 120_000);
    });
    await Promise.race([app.searchEngine.catchUp(), hung]).finally(() => clearTimeout(timer));
  }
  afterAll(async () => {
    await app.close();
    if (!opts.database) await database.drop();
  });
  return { app, database, clock, config, logs };
}
