import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { BillingDeps } from '../../domain/billing/billing-deps.js';
import { cancelTopUp, getTopUp, listTopUps, requestTopUp } from '../../domain/billing/top-ups.js';
import { usdToCents } from '../../domain/money/format.js';
import { authErrors, bearerSecurity, errorResponses } from '../../schemas/common.js';
import { emptyBody } from '../../schemas/orders.js';
import { idParam } from '../../schemas/outlets.js';
import { pageEnvelope, paginated } from '../../schemas/pagination.js';
import { topUpListQuery, topUpRequest, topUpRequestBody } from '../../schemas/top-ups.js';
import { workspacePrincipal } from '../plugins/auth.js';
import { onceFor, sendKept } from '../plugins/idempotency.js';

/**
 * Adding funds (docs/billing.md): any key of the workspace reads its top-up requests; making and
 * cancelling one take a key that may spend, the API's counterpart of the console's owners.
 */
export const topUpRoutes: FastifyPluginAsyncZod<{ billing: BillingDeps; publicBaseUrl: string | undefined }> = async (app, { billing, publicBaseUrl }) => {
  const tags = ['Top-ups'];
  const one = z.object({ data: topUpRequest });

  app.post(
    '/top-ups',
    {
      config: { spending: true, idempotency: 'optional' },
      schema: {
        operationId: 'requestTopUp',
        summary:
          'Add funds: a top-up request with its reference, payment instructions and invoice. The balance grows once the money arrives and staff confirm it. Needs a spending key.',
        tags,
        security: bearerSecurity,
        body: topUpRequestBody,
        response: { 201: one, ...errorResponses(...authErrors, 400, 409, 422) },
      },
    },
    async (request, reply) => {
      const kept = await requestTopUp(billing, { kind: 'key', principal: workspacePrincipal(request) }, usdToCents(request.body.amount_usd), onceFor(request));
      return sendKept(request, reply, kept, 201);
    },
  );

  app.get(
    '/top-ups',
    {
      schema: {
        operationId: 'listTopUps',
        summary: "The workspace's top-up requests, newest first.",
        tags,
        security: bearerSecurity,
        querystring: topUpListQuery,
        response: { 200: paginated(topUpRequest), ...errorResponses(...authErrors, 422) },
      },
    },
    async (request) => {
      const { page, per_page, status } = request.query;
      const { items, total } = await listTopUps(billing.pool, workspacePrincipal(request).workspaceId, { status }, page, per_page, billing.baseUrl);
      return { data: items, ...pageEnvelope(request, publicBaseUrl, { page, perPage: per_page, total, count: items.length }) };
    },
  );

  app.get(
    '/top-ups/:id',
    {
      schema: {
        operationId: 'getTopUp',
        summary: 'One top-up request: its status, and once confirmed the amount received.',
        tags,
        security: bearerSecurity,
        params: idParam,
        response: { 200: one, ...errorResponses(...authErrors, 404, 422) },
      },
    },
    async (request) => ({ data: await getTopUp(billing.pool, workspacePrincipal(request).workspaceId, request.params.id, billing.baseUrl) }),
  );

  app.post(
    '/top-ups/:id/cancel',
    {
      config: { spending: true, idempotency: 'optional' },
      schema: {
        operationId: 'cancelTopUp',
        summary: 'Withdraw a pending top-up request (pending → cancelled); a payment sent for it afterwards is not credited. Needs a spending key.',
        tags,
        security: bearerSecurity,
        params: idParam,
        body: emptyBody,
        response: { 200: one, ...errorResponses(...authErrors, 400, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const kept = await cancelTopUp(billing, { kind: 'key', principal: workspacePrincipal(request) }, request.params.id, onceFor(request));
      return sendKept(request, reply, kept, 200);
    },
  );
};
