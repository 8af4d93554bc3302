import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type pg from 'pg';
import { z } from 'zod';
import { listLedger } from '../../domain/ledger/ledger-queries.js';
import { workspacePrincipal } from '../plugins/auth.js';
import { authErrors, bearerSecurity, errorResponses } from '../../schemas/common.js';
import { ledgerEntry } from '../../schemas/ledger.js';
import { pageEnvelope, pageQuery, paginated } from '../../schemas/pagination.js';

export const ledgerRoutes: FastifyPluginAsyncZod<{ pool: pg.Pool; publicBaseUrl: string | undefined }> = async (app, { pool, publicBaseUrl }) => {
  app.get(
    '/ledger',
    {
      schema: {
        operationId: 'listLedger',
        summary: "The workspace's ledger entries (available and held accounts), newest first.",
        tags: ['Workspace'],
        security: bearerSecurity,
        querystring: z.strictObject(pageQuery),
        response: { 200: paginated(ledgerEntry), ...errorResponses(...authErrors, 422) },
      },
    },
    async (request) => {
      const { page, per_page } = request.query;
      const { items, total } = await listLedger(pool, workspacePrincipal(request), page, per_page);
      return { data: items, ...pageEnvelope(request, publicBaseUrl, { page, perPage: per_page, total, count: items.length }) };
    },
  );
};
