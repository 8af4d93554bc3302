import Fastify, { type FastifyBaseLogger, LogController } from 'fastify';
import sensible from '@fastify/sensible';
import { validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Database } from './db/client.js';
import { type Clock, systemClock } from './domain/clock.js';
import { KeyResolver } from './domain/keys/key-resolver.js';
import { opsRoutes } from './http/ops.js';
import { bearerAuth, createAuthService } from './http/plugins/auth.js';
import { errorHandling } from './http/plugins/errors.js';
import { jsonBody } from './http/plugins/json-body.js';
import { requestLogging } from './http/plugins/logging.js';
import { openApi } from './http/plugins/openapi.js';
import { createLimiter } from './http/plugins/rate-limit.js';
import { genReqId } from './http/plugins/request-id.js';
import { v1Routes } from './http/v1/index.js';

export interface AppDeps {
  config: Config;
  database: Database;
  logger: Logger;
  clock?: Clock;
  redis?: Redis;
}

export const BODY_LIMIT = 1024 * 1024;

/** The whole service as a Fastify instance; server.ts listens, tests inject. */
export async function buildApp(deps: AppDeps) {
  const clock = deps.clock ?? systemClock;
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    // One line per request is written by http/plugins/logging.ts instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    genReqId,
    requestIdHeader: false,
    bodyLimit: BODY_LIMIT,
    trustProxy: false,
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: true },
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  // Responses are documented by zod schemas but serialised without re-validation on the hot path;
  // the test suite checks responses against the same schemas.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });

  await app.register(sensible);
  await app.register(requestLogging);
  await app.register(errorHandling);
  await app.register(jsonBody);
  await app.register(openApi, { serverUrl: deps.config.PUBLIC_BASE_URL });

  const resolver = new KeyResolver(deps.database.pool, clock, (err) => app.log.warn({ err }, 'last_used_at update failed'));
  const limiter = await createLimiter(app, deps.redis, deps.config.REDIS_KEY_PREFIX);
  const auth = createAuthService({
    resolver,
    limiter,
    clock,
    perKeyPerMinute: deps.config.RATE_LIMIT_PER_MINUTE,
    unknownPerIpPerMinute: deps.config.UNKNOWN_KEY_RATE_LIMIT_PER_MINUTE,
  });
  await app.register(bearerAuth, { auth });

  await app.register(opsRoutes, { pool: deps.database.pool });
  await app.register(v1Routes, {
    prefix: '/api/v1',
    pool: deps.database.pool,
    db: deps.database.db,
    publicBaseUrl: deps.config.PUBLIC_BASE_URL,
  });

  app.addHook('onClose', async () => {
    resolver.clear();
  });
  return app;
}
