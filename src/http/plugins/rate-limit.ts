import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';

export interface LimitResult {
  limit: number;
  remaining: number;
  exceeded: boolean;
  retryAfterSeconds: number;
}

export interface Limiter {
  /** Counts one request in `bucket`; synchronous for the in-memory store. */
  hit(bucket: string, max: number): LimitResult | Promise<LimitResult>;
}

interface StoreResult {
  current: number;
  ttl: number;
}
interface Store {
  incr(key: string, cb: (err: Error | null, res: StoreResult) => void, timeWindow: number, max: number): void;
}
type StoreClass = new (continueExceeding: boolean, exponentialBackoff: boolean, ...rest: unknown[]) => Store;

// @fastify/rate-limit's own stores, used directly: its route hook would add several awaited
// layers per request, and the key is only known after authentication.
const require = createRequire(import.meta.url);
const LocalStore = require('@fastify/rate-limit/store/LocalStore.js') as StoreClass;
const RedisStore = require('@fastify/rate-limit/store/RedisStore.js') as StoreClass;

const WINDOW_MS = 60_000;
const LOCAL_KEYS = 100_000;

function toResult(res: StoreResult, max: number): LimitResult {
  return {
    limit: max,
    remaining: Math.max(0, max - res.current),
    exceeded: res.current > max,
    retryAfterSeconds: Math.max(1, Math.ceil(res.ttl / 1000)),
  };
}

/**
 * One fixed one-minute window per bucket (an API key, or a client IP for unknown keys). With
 * Redis the count is shared by every process; while Redis is unreachable each process falls back
 * to its own in-memory count, so limits still hold per process instead of failing open.
 */
export function createLimiter(redis?: Redis, prefix = 'mkt:'): Limiter {
  const local = new LocalStore(false, false, LOCAL_KEYS);
  const shared = redis ? new RedisStore(false, false, redis, `${prefix}rl:`) : undefined;
  const localHit = (bucket: string, max: number): LimitResult => {
    let out: StoreResult = { current: 1, ttl: WINDOW_MS };
    local.incr(bucket, (_err, res) => (out = res), WINDOW_MS, max); // calls back synchronously
    return toResult(out, max);
  };
  return {
    hit(bucket, max) {
      if (!shared || redis?.status !== 'ready') return localHit(bucket, max);
      return new Promise((resolve) =>
        shared.incr(bucket, (err, res) => resolve(err ? localHit(bucket, max) : toResult(res, max)), WINDOW_MS, max),
      );
    },
  };
}
