import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';

export interface LimitResult {
  limit: number;
  remaining: number;
  exceeded: boolean;
  retryAfterSeconds: number;
}

export interface Limiter {
  hit(request: FastifyRequest, bucket: string, max: number): Promise<LimitResult>;
}

type RawLimiter = (req: FastifyRequest) => Promise<{
  isAllowed: boolean;
  max?: number;
  remaining?: number;
  ttlInSeconds?: number;
  isExceeded?: boolean;
}>;

declare module 'fastify' {
  interface FastifyRequest {
    rateBucket?: string;
    rateMax?: number;
  }
}

const WINDOW_MS = 60_000;

/** @fastify/rate-limit's limiter, built in its own encapsulated context so two can coexist. */
async function buildLimiter(app: FastifyInstance, redis: Redis | undefined, prefix: string): Promise<RawLimiter> {
  let limiter: RawLimiter | undefined;
  await app.register(async (scope) => {
    await scope.register(rateLimit, {
      global: false,
      ...(redis ? { redis, nameSpace: `${prefix}rl:` } : {}),
      skipOnError: false,
    });
    limiter = scope.createRateLimit({
      keyGenerator: (req: FastifyRequest) => req.rateBucket ?? req.ip,
      max: (req: FastifyRequest) => req.rateMax ?? 1,
      timeWindow: WINDOW_MS,
    }) as unknown as RawLimiter;
  });
  await app.after();
  return limiter!;
}

/**
 * One fixed one-minute window per bucket (an API key, or a client IP for unknown keys). With
 * Redis the count is shared by every process; while Redis is unreachable each process falls back
 * to its own in-memory count, so limits still hold per process instead of failing open.
 */
export async function createLimiter(app: FastifyInstance, redis?: Redis, prefix = 'mkt:'): Promise<Limiter> {
  const local = await buildLimiter(app, undefined, prefix);
  const shared = redis ? await buildLimiter(app, redis, prefix) : undefined;
  return {
    async hit(request, bucket, max) {
      request.rateBucket = bucket;
      request.rateMax = max;
      let r;
      if (shared && redis?.status === 'ready') {
        try {
          r = await shared(request);
        } catch {
          r = await local(request);
        }
      } else {
        r = await local(request);
      }
      return {
        limit: max,
        remaining: r.remaining ?? max,
        exceeded: Boolean(r.isExceeded),
        retryAfterSeconds: Math.max(1, r.ttlInSeconds ?? 60),
      };
    },
  };
}
