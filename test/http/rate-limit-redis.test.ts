import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { createRedis } from '../../src/infra/redis.js';
import { setupApp } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/db.js';
import { bearer, workspaceWithKeys } from '../helpers/fixtures.js';
import { testRedisUrl, uniquePrefix } from '../helpers/redis.js';

const redisUrl = await testRedisUrl();

describe.skipIf(!redisUrl)('rate limit shared through Redis', async () => {
  const database = await createTestDatabase();
  const prefix = uniquePrefix();
  const log = createLogger('silent');
  const redisA = createRedis(redisUrl!, log);
  const redisB = createRedis(redisUrl!, log);
  const limits = { RATE_LIMIT_PER_MINUTE: 10, REDIS_URL: redisUrl!, REDIS_KEY_PREFIX: prefix };
  const a = await setupApp(limits, { database, redis: redisA });
  const b = await setupApp(limits, { database, redis: redisB });
  afterAll(async () => {
    redisA.disconnect();
    redisB.disconnect();
    await database.drop();
  });
  await Promise.all([redisA, redisB].map((r) => (r.status === 'ready' ? undefined : new Promise((ok) => r.once('ready', ok)))));

  it('two app instances on one Redis count one bucket per key', async () => {
    const ws = await workspaceWithKeys(database.pool);
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      const app = i % 2 === 0 ? a.app : b.app;
      statuses.push((await app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(ws.readKey) })).statusCode);
    }
    expect(statuses.slice(0, 10).every((s) => s === 200)).toBe(true);
    expect(statuses.slice(10)).toEqual([429, 429]);
    const res = await b.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(ws.readKey) });
    expect(res.headers['retry-after']).toBeDefined();
  });

  it('while Redis is unreachable each process falls back to its own in-memory limit', async () => {
    const ws = await workspaceWithKeys(database.pool);
    redisA.disconnect(); // as if Redis went away for instance A
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      statuses.push((await a.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(ws.readKey) })).statusCode);
    }
    expect(statuses.slice(0, 10).every((s) => s === 200)).toBe(true);
    expect(statuses[10]).toBe(429);
    // Instance B still counts in Redis, which never saw A's requests.
    expect((await b.app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(ws.readKey) })).statusCode).toBe(200);
  });
});
