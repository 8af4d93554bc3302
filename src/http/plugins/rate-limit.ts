import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';

export interface LimitResult {
  limit: number;
  remaining: number;
  exceeded: boolean;
  retryAfterSeconds: number;
}

export interface Limiter {
  /** Counts `requests` (one unless a batch) in `bucket`, whose limit is `max` a minute. */
  hit(bucket: string, max: number, requests?: number): Promise<LimitResult>;
}

const WINDOW_SECONDS = 60;

function toResult(res: RateLimiterRes, max: number): LimitResult {
  return {
    limit: max,
    remaining: Math.max(0, max - res.consumedPoints),
    exceeded: res.consumedPoints > max,
    retryAfterSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
  };
}

/**
 * One fixed one-minute window per bucket (an API key, or a client IP for unknown keys), counted
 * with `rate-limiter-flexible`, the library behind the failure limiter too. With Redis the count
 * is shared by every process (`<prefix>rl:<bucket>`, one script per request); while Redis is
 * unreachable each process falls back to its own in-memory count (the library's insurance
 * limiter), so limits still hold per process instead of failing open.
 */
export function createLimiter(redis?: Redis, prefix = 'mkt:'): Limiter {
  const keyPrefix = `${prefix}rl`;
  // One counter per limit (a key's, an address's): the library fixes a counter's limit, and a
  // bucket is always counted against the same one (`key:` buckets a key's, `ip:` an address's).
  const byMax = new Map<number, RateLimiterAbstract>();
  const limiterFor = (max: number): RateLimiterAbstract => {
    let limiter = byMax.get(max);
    if (!limiter) {
      const memory = new RateLimiterMemory({ keyPrefix, points: max, duration: WINDOW_SECONDS });
      limiter = redis
        ? new RateLimiterRedis({ storeClient: redis, keyPrefix, points: max, duration: WINDOW_SECONDS, rejectIfRedisNotReady: true, insuranceLimiter: memory })
        : memory;
      byMax.set(max, limiter);
    }
    return limiter;
  };
  return {
    async hit(bucket, max, requests = 1) {
      try {
        return toResult(await limiterFor(max).consume(bucket, requests), max);
      } catch (err) {
        // A bucket past its limit is a rejection carrying the count; anything else is a fault.
        if (err instanceof RateLimiterRes) return toResult(err, max);
        throw err;
      }
    },
  };
}
