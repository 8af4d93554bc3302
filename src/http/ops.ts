import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type pg from 'pg';
import { z } from 'zod';

const okBody = z.object({ status: z.literal('ok') });
const readyBody = z.object({ status: z.enum(['ok', 'unavailable']) });

/** Liveness and readiness; no key needed, no rate limit. */
export const opsRoutes: FastifyPluginAsyncZod<{ pool: pg.Pool; searchReady: () => boolean }> = async (app, { pool, searchReady }) => {
  app.get(
    '/healthz',
    {
      config: { auth: 'public' },
      schema: {
        operationId: 'healthz',
        summary: 'Liveness: the process answers (does not touch the database).',
        tags: ['Operations'],
        security: [],
        response: { 200: okBody },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      config: { auth: 'public' },
      schema: {
        operationId: 'readyz',
        summary: 'Readiness: 200 when the database answers and search can serve (its in-memory index loaded and warmed up), 503 otherwise.',
        tags: ['Operations'],
        security: [],
        response: { 200: readyBody, 503: readyBody },
      },
    },
    async (request, reply) => {
      // Not ready while the search's in-memory index loads and warms up.
      if (!searchReady()) return reply.code(503).send({ status: 'unavailable' as const });
      try {
        await pool.query('SELECT 1');
        return { status: 'ok' as const };
      } catch (err) {
        request.log.warn({ err: (err as Error).message }, 'readiness check failed');
        return reply.code(503).send({ status: 'unavailable' as const });
      }
    },
  );
};
