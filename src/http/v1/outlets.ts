import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type pg from 'pg';
import { z } from 'zod';
import { getOutlet } from '../../domain/outlets/outlet-detail.js';
import type { SearchEngine } from '../../domain/outlets/search-engine.js';
import { outletSearchOf, searchOutlets } from '../../domain/outlets/search.js';
import { workspacePrincipal } from '../plugins/auth.js';
import { authErrors, bearerSecurity, errorResponses } from '../../schemas/common.js';
import { idParam, outletDetail, outletListItem, outletListQuery } from '../../schemas/outlets.js';
import { pageEnvelope, paginated } from '../../schemas/pagination.js';

export const outletRoutes: FastifyPluginAsyncZod<{ pool: pg.Pool; search: SearchEngine; publicBaseUrl: string | undefined }> = async (
  app,
  { pool, search, publicBaseUrl },
) => {

  app.get(
    '/outlets',
    {
      schema: {
        operationId: 'listOutlets',
        summary: 'Search verified publications (outlets) that have an active offer; ranked full-text search with filters.',
        tags: ['Outlets'],
        security: bearerSecurity,
        querystring: outletListQuery,
        response: { 200: paginated(outletListItem), ...errorResponses(...authErrors, 422, 503) },
      },
    },
    async (request) => {
      const { page, per_page, max_price_usd, ...params } = request.query;
      const s = outletSearchOf({ ...params, max_price_cents: max_price_usd });
      const { items, total } = await searchOutlets(search, pool, workspacePrincipal(request).workspaceId, s, page, per_page);
      return { data: items, ...pageEnvelope(request, publicBaseUrl, { page, perPage: per_page, total, count: items.length }) };
    },
  );

  app.get(
    '/outlets/:id',
    {
      schema: {
        operationId: 'getOutlet',
        summary: 'One outlet with every active offer, fee-inclusive prices, verified traffic and track record.',
        tags: ['Outlets'],
        security: bearerSecurity,
        params: idParam,
        response: { 200: z.object({ data: outletDetail }), ...errorResponses(...authErrors, 404, 422) },
      },
    },
    async (request) => ({ data: await getOutlet(pool, workspacePrincipal(request).workspaceId, request.params.id) }),
  );
};
