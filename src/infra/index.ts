import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import { databasePool } from './database.js';
import { embeddedPostgres } from './embedded-postgres.js';
import { loopDelayLog } from './loop-delay.js';
import { metricsListener } from './metrics.js';
import { redisClient } from './redis.js';

/**
 * What the app runs on, as the configuration asks: the embedded PostgreSQL when no DATABASE_URL
 * is set, the migrated pool, Redis and the metrics listener when configured, the event loop's delay
 * in the log when asked. Each closes itself
 * when the app closes, in the reverse order of this list.
 */
export const infrastructure = fp(
  async function infrastructure(app: FastifyInstance, { config }: { config: Config }) {
    // First, so that its figures cover the start (the search index's load) too.
    if (config.EVENT_LOOP_DELAY_LOG_MS > 0) await app.register(loopDelayLog, { intervalMs: config.EVENT_LOOP_DELAY_LOG_MS });
    if (!config.DATABASE_URL) await app.register(embeddedPostgres, { dataDir: config.DATA_DIR, port: config.EMBEDDED_PG_PORT });
    await app.register(databasePool, {
      url: config.DATABASE_URL ?? app.embeddedPostgres!.url,
      max: config.DATABASE_POOL_MAX,
      connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
      statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
    });
    if (config.REDIS_URL) await app.register(redisClient, { url: config.REDIS_URL });
    if (config.METRICS_PORT !== undefined) await app.register(metricsListener, { port: config.METRICS_PORT });
  },
  { name: 'infrastructure' },
);
