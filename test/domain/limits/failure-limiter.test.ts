import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createFailureLimiter } from '../../../src/domain/limits/failure-limiter.js';
import { testRedisUrl, uniquePrefix } from '../../helpers/redis.js';

// The failure counter behind the console's sign-in and sign-up limits (docs/console.md).

const url = await testRedisUrl();

async function exhausts(limiter: ReturnType<typeof createFailureLimiter>, key: string, points: number) {
  for (let i = 0; i < points; i++) {
    expect((await limiter.check(key)).blocked, `before failure ${i + 1}`).toBe(false);
    await limiter.fail(key);
  }
  const state = await limiter.check(key);
  expect(state.blocked).toBe(true);
  expect(state.retryAfterSeconds).toBeGreaterThan(0);
  expect(state.retryAfterSeconds).toBeLessThanOrEqual(900);
}

describe('failure limiter', () => {
  it('in memory: blocks a key once its failures are used up, and only that key', async () => {
    const limiter = createFailureLimiter({ name: 't', points: 3, windowSeconds: 900 });
    await exhausts(limiter, 'account:a@example.com', 3);
    expect((await limiter.check('account:b@example.com')).blocked).toBe(false);
  });

  it('forgive gives back one counted failure', async () => {
    const limiter = createFailureLimiter({ name: 'f', points: 2, windowSeconds: 900 });
    await limiter.fail('k');
    await limiter.fail('k');
    expect((await limiter.check('k')).blocked).toBe(true);
    await limiter.forgive('k');
    expect((await limiter.check('k')).blocked).toBe(false);
    expect((await limiter.fail('k')).blocked).toBe(false);
    expect((await limiter.fail('k')).blocked).toBe(true);
  });

  it('with Redis unreachable: each process counts in memory', async () => {
    const redis = new Redis('redis://127.0.0.1:1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    redis.on('error', () => {});
    const limiter = createFailureLimiter({ name: 't', points: 2, windowSeconds: 900, redis, prefix: uniquePrefix() });
    await exhausts(limiter, 'ip:10.0.0.1', 2);
    redis.disconnect();
  });

  describe.skipIf(!url)('in Redis (TEST_REDIS_URL)', () => {
    const clients: Redis[] = [];
    afterAll(() => clients.forEach((c) => c.disconnect()));
    it('two processes share one count', async () => {
      const prefix = uniquePrefix();
      const [a, b] = [new Redis(url!), new Redis(url!)];
      clients.push(a, b);
      await Promise.all([a.ping(), b.ping()]); // ready: a client still connecting counts in memory
      const one = createFailureLimiter({ name: 't', points: 4, windowSeconds: 900, redis: a, prefix });
      const two = createFailureLimiter({ name: 't', points: 4, windowSeconds: 900, redis: b, prefix });
      await one.fail('k');
      await two.fail('k');
      await one.fail('k');
      expect((await two.check('k')).blocked).toBe(false);
      await two.fail('k');
      expect((await one.check('k')).blocked).toBe(true);
    });
  });
});
