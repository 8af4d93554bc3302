import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

/** The Redis URL for tests, when one is configured and answers; else undefined (tests skip). */
export async function testRedisUrl(): Promise<string | undefined> {
  const url = process.env.TEST_REDIS_URL ?? process.env.REDIS_URL;
  if (!url) return undefined;
  const probe = new Redis(url, { lazyConnect: true, connectTimeout: 1000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => {});
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG' ? url : undefined;
  } catch {
    return undefined;
  } finally {
    probe.disconnect();
  }
}

/** A key prefix no other test run shares, so fixed windows never collide between runs. */
export const uniquePrefix = () => `mkt-test-${randomBytes(4).toString('hex')}:`;
