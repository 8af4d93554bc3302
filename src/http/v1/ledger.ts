import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type pg from 'pg';
import { z } from 'zod';
import { eachLedgerEntry, listLedger } from '../../domain/ledger/ledger-queries.js';
import { workspacePrincipal } from '../plugins/auth.js';
import { authErrors, bearerSecurity, errorResponses } from '../../schemas/common.js';
import { ledgerCsvColumns, ledgerEntry } from '../../schemas/ledger.js';
import { listFormat, sendCsv } from '../negotiate.js';
import { pageEnvelope, pageQuery, paginated } from '../../schemas/pagination.js';

export const ledgerRoutes: FastifyPluginAsyncZod<{ pool: pg.Pool; publicBaseUrl: string | undefined }> = async (app, { pool, publicBaseUrl }) => {
  app.get(
    '/ledger',
    {
      config: { csv: ledgerCsvColumns },
      schema: {
        operationId: 'listLedger',
        summary: "The workspace's ledger entries (available and held accounts), newest first. With Accept: text/csv, every entry as CSV (page and per_page ignored).",
        tags: ['Workspace'],
        security: bearerSecurity,
        querystring: z.strictObject(pageQuery),
        response: { 200: paginated(ledgerEntry), ...errorResponses(...authErrors, 406, 422) },
      },
    },
    async (request, reply) => {
      const { page, per_page } = request.query;
      const format = listFormat(request);
      const principal = workspacePrincipal(request);
      if (format === 'csv') return sendCsv(reply, 'ledger.csv', ledgerCsvColumns, eachLedgerEntry(pool, principal.workspaceId));
      reply.header('vary', 'Accept');
      const { items, total } = await listLedger(pool, principal, page, per_page);
      return { data: items, ...pageEnvelope(request, publicBaseUrl, { page, perPage: per_page, total, count: items.length }) };
    },
  );
};
