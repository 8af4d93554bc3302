import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type pg from 'pg';
import { z } from 'zod';
import type { SearchEngine } from '../domain/outlets/search-engine.js';

const okBody = z.object({ status: z.literal('ok') });
const readyBody = z.object({ status: z.enum(['ok', 'unavailable']) });

/** Liveness and readiness; no key needed, no rate limit. */
export const opsRoutes: FastifyPluginAsyncZod<{ pool: pg.Pool; search: SearchEngine }> = async (app, { pool, search }) => {
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
        summary: 'Readiness: 200 when the database answers and search can serve (its in-memory index loaded), 503 otherwise.',
        tags: ['Operations'],
        security: [],
        response: { 200: readyBody, 503: readyBody },
      },
    },
    async (request, reply) => {
      // Not ready while the search's in-memory index loads.
      if (!search.ready) return reply.code(503).send({ status: 'unavailable' as const });
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
