import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { BillingDeps } from '../../domain/billing/billing-deps.js';
import { eachPayout, getPayout, listPayouts } from '../../domain/billing/payouts.js';
import { authErrors, bearerSecurity, errorResponses } from '../../schemas/common.js';
import { idParam } from '../../schemas/outlets.js';
import { pageEnvelope, paginated } from '../../schemas/pagination.js';
import { payout, payoutCsvColumns, payoutListQuery } from '../../schemas/payouts.js';
import { listFormat, sendCsv } from '../negotiate.js';
import { publisherId } from './publisher.js';

/**
 * A publisher's payouts (docs/billing.md), read with a publisher key. Asking for a payout and
 * saying where to be paid are the console's, for the publisher's owners only: a publisher key can
 * be made by a member, and money out to a bank account stays with the owners.
 */
export const publisherPayoutRoutes: FastifyPluginAsyncZod<{ billing: BillingDeps; publicBaseUrl: string | undefined }> = async (app, { billing, publicBaseUrl }) => {
  const config = { auth: 'publisher' as const };
  const tags = ['Publisher'];

  app.get(
    '/payouts',
    {
      config: { ...config, csv: payoutCsvColumns },
      schema: {
        operationId: 'publisherListPayouts',
        summary: "The publisher's payouts, newest first. Owners ask for them in the console. With Accept: text/csv, every matching payout as CSV (page and per_page ignored).",
        tags,
        security: bearerSecurity,
        querystring: payoutListQuery,
        response: { 200: paginated(payout), ...errorResponses(...authErrors, 406, 422) },
      },
    },
    async (request, reply) => {
      const { page, per_page, status } = request.query;
      if (listFormat(request) === 'csv') return sendCsv(reply, 'payouts.csv', payoutCsvColumns, eachPayout(billing.pool, publisherId(request), { status }));
      reply.header('vary', 'Accept');
      const { items, total } = await listPayouts(billing.pool, publisherId(request), { status }, page, per_page);
      return { data: items, ...pageEnvelope(request, publicBaseUrl, { page, perPage: per_page, total, count: items.length }) };
    },
  );

  app.get(
    '/payouts/:id',
    {
      config,
      schema: {
        operationId: 'publisherGetPayout',
        summary: 'One payout: its status, the bank reference once sent, the reason if it failed.',
        tags,
        security: bearerSecurity,
        params: idParam,
        response: { 200: z.object({ data: payout }), ...errorResponses(...authErrors, 404, 422) },
      },
    },
    async (request) => ({ data: await getPayout(billing.pool, publisherId(request), request.params.id) }),
  );
};
