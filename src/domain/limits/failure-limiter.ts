import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';

/**
 * Counts failures (wrong passwords, sign-ups, invalid purchase codes) per key in a fixed window
 * that starts at the key's first failure, with `rate-limiter-flexible`: in Redis when the app has
 * a client (shared by every process), else in memory. While Redis is unreachable each process
 * falls back to its own count in memory, as the request rate limiter does. Once a key has used up
 * its failures every attempt is refused until the window passes, right ones included, so guessing
 * cannot be told apart from knowing.
 */
export interface FailureLimiter {
  /** Failures allowed per window. */
  readonly points: number;
  /** Whether the key has used up its failures in the current window. */
  check(key: string): Promise<LimitState>;
  /**
   * Counts one failure. `windowSeconds` sets the length of a window this failure starts (a key
   * with none running); a running window keeps its end.
   */
  fail(key: string, windowSeconds?: number): Promise<LimitState>;
  /**
   * Gives back one failure counted by `fail`. Work that must not run past the limit even when
   * many attempts arrive at once counts the attempt first (`fail`), then forgives it when it
   * succeeded: a `check` made before any of them is counted would let them all through.
   */
  forgive(key: string): Promise<void>;
}

export interface LimitState {
  blocked: boolean;
  retryAfterSeconds: number;
  /** Failures counted in the key's current window (this one included, after `fail`). */
  count: number;
}

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

export function createFailureLimiter(opts: { name: string; points: number; windowSeconds: number; redis?: Redis; prefix?: string }): FailureLimiter {
  const keyPrefix = `${opts.prefix ?? 'mkt:'}fail:${opts.name}`;
  const memory = new RateLimiterMemory({ keyPrefix, points: opts.points, duration: opts.windowSeconds });
  const limiter: RateLimiterAbstract = opts.redis
    ? new RateLimiterRedis({
        storeClient: opts.redis,
        keyPrefix,
        points: opts.points,
        duration: opts.windowSeconds,
        rejectIfRedisNotReady: true,
        insuranceLimiter: memory,
      })
    : memory;
  // A window that has passed but whose memory record is not yet dropped (its timer runs late on a
  // busy process) blocks nothing.
  const state = (res: RateLimiterRes | null, threshold: number): LimitState => {
    const count = res && res.msBeforeNext > 0 ? res.consumedPoints : 0;
    return count >= threshold ? { blocked: true, retryAfterSeconds: seconds(res!.msBeforeNext), count } : { blocked: false, retryAfterSeconds: 0, count };
  };
  return {
    points: opts.points,
    async check(key) {
      let res: RateLimiterRes | null;
      try {
        res = await limiter.get(key);
      } catch {
        res = await memory.get(key);
      }
      return state(res, opts.points);
    },
    async fail(key, windowSeconds) {
      const options = windowSeconds === undefined ? {} : { customDuration: windowSeconds };
      try {
        return state(await limiter.consume(key, 1, options), opts.points + 1);
      } catch (err) {
        if (err instanceof RateLimiterRes) return state(err, opts.points + 1);
        return state(await memory.consume(key, 1, options).catch((e: unknown) => (e instanceof RateLimiterRes ? e : null)), opts.points + 1);
      }
    },
    async forgive(key) {
      try {
        await limiter.reward(key, 1);
      } catch {
        await memory.reward(key, 1);
      }
    },
  };
}
