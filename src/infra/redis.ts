import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';

/**
 * A Redis client that never makes a request wait: commands fail at once while disconnected
 * (no offline queue), and callers fall back to local behaviour.
 */
export function createRedis(url: string, log: Logger): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 1000,
    commandTimeout: 500,
    retryStrategy: (times) => Math.min(times * 200, 2000),
    lazyConnect: false,
  });
  let down = false;
  redis.on('error', (err) => {
    if (!down) log.warn({ err: err.message }, 'redis unreachable; using per-process fallbacks');
    down = true;
  });
  redis.on('ready', () => {
    if (down) log.info('redis is back');
    down = false;
  });
  return redis;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Shared rate limits and purchase-code guards; absent without REDIS_URL (per-process fallbacks). */
    redis?: Redis;
  }
}

/** The Redis client at `url`, disconnected when the app closes. */
export const redisClient = fp(
  async function redisClient(app: FastifyInstance, { url }: { url: string }) {
    const redis = createRedis(url, app.log as Logger);
    app.addHook('onClose', async () => {
      redis.disconnect();
    });
    app.decorate('redis', redis);
  },
  { name: 'redis' },
);
