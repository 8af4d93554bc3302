import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type pg from 'pg';
import { z } from 'zod';
import { getOutlet } from '../../domain/outlets/outlet-detail.js';
import { searchOutlets } from '../../domain/outlets/search.js';
import { startSearchCounter } from '../../domain/outlets/search-live.js';
import { workspacePrincipal } from '../plugins/auth.js';
import { authErrors, bearerSecurity, errorResponses } from '../../schemas/common.js';
import { idParam, outletDetail, outletListItem, outletListQuery } from '../../schemas/outlets.js';
import { pageEnvelope, paginated } from '../../schemas/pagination.js';

export const outletRoutes: FastifyPluginAsyncZod<{ pool: pg.Pool; publicBaseUrl: string | undefined }> = async (
  app,
  { pool, publicBaseUrl },
) => {
  // The search index of this process picks each page's ids and counts matches (loaded now, kept current by NOTIFY).
  const counter = startSearchCounter(pool, (err) => app.log.warn({ err: err.message }, 'search index: reloading'));
  app.addHook('onClose', () => counter.stop());

  app.get(
    '/outlets',
    {
      schema: {
        operationId: 'listOutlets',
        summary: 'Search verified publications (outlets) that have an active offer; ranked full-text search with filters.',
        tags: ['Outlets'],
        security: bearerSecurity,
        querystring: outletListQuery,
        response: { 200: paginated(outletListItem), ...errorResponses(...authErrors, 422) },
      },
    },
    async (request) => {
      const { page, per_page, q, max_price_usd, verified_traffic, min_traffic, ...rest } = request.query;
      const { items, total } = await searchOutlets(
        pool,
        workspacePrincipal(request).workspaceId,
        {
          ...rest,
          ...(q ? { q } : {}),
          ...(max_price_usd !== undefined ? { maxPriceCents: max_price_usd } : {}),
          ...(verified_traffic !== undefined ? { verifiedTraffic: verified_traffic } : {}),
          ...(min_traffic !== undefined ? { minTraffic: min_traffic } : {}),
        },
        page,
        per_page,
      );
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
