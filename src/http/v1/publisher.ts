import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { DomainError } from '../../domain/errors.js';
import { eachOrder, getOrder, listMessages, listOrders } from '../../domain/orders/order-read.js';
import type { Kept, OnceOptions } from '../../domain/idempotency/record-once.js';
import { publisherOrders } from '../../domain/orders/publisher-actions.js';
import { onceFor, sendKept } from '../plugins/idempotency.js';
import { authErrors, bearerSecurity, errorResponses } from '../../schemas/common.js';
import { contentBody, declineBody, emptyBody, messageBody, messageSchema, orderListQuery, publishBody, publisherOrder, publisherOrderCsvColumns } from '../../schemas/orders.js';
import { idParam } from '../../schemas/outlets.js';
import { pageEnvelope, paginated, pageQuery } from '../../schemas/pagination.js';
import type { ActionRequest, OrderRouteDeps } from './orders.js';
import { BODY_LIMITS } from '../body-limits.js';
import { listFormat, sendCsv } from '../negotiate.js';
import type { LinkChecker } from '../../domain/orders/link-checker.js';
import { publisherMe } from '../../domain/publishers/publisher-service.js';
import { publisherMeData } from '../../schemas/me.js';

export function publisherId(request: FastifyRequest): number {
  const id = request.principal?.publisherId;
  if (id === null || id === undefined) throw new DomainError('forbidden', 'This route needs a publisher key.');
  return id;
}

/** The publisher side (docs/orders.md): orders on the publisher's own outlets only. */
export const publisherRoutes: FastifyPluginAsyncZod<OrderRouteDeps & { linkChecker: LinkChecker }> = async (
  app,
  { pool, clock, durations, publicBaseUrl, linkChecker },
) => {
  const actions = { pool, clock, durations };
  const auth = { auth: 'publisher' as const };
  const one = z.object({ data: publisherOrder });

  app.get(
    '/me',
    {
      config: auth,
      schema: {
        operationId: 'publisherMe',
        summary: 'The publisher behind the key, with its pending and payable balances.',
        tags: ['Publisher'],
        security: bearerSecurity,
        response: { 200: z.object({ data: publisherMeData }), ...errorResponses(...authErrors) },
      },
    },
    async (request) => ({ data: await publisherMe(pool, publisherId(request)) }),
  );

  app.get(
    '/orders',
    {
      config: { ...auth, csv: publisherOrderCsvColumns },
      schema: {
        operationId: 'publisherListOrders',
        summary: "Orders on this publisher's outlets, newest first. With Accept: text/csv, every matching order as CSV (page and per_page ignored).",
        tags: ['Publisher'],
        security: bearerSecurity,
        querystring: orderListQuery,
        response: { 200: paginated(publisherOrder), ...errorResponses(...authErrors, 406, 422) },
      },
    },
    async (request, reply) => {
      const { page, per_page, status, your_turn } = request.query;
      const format = listFormat(request);
      const viewer = { party: 'publisher' as const, publisherId: publisherId(request) };
      const filters = { ...(status ? { status } : {}), ...(your_turn !== undefined ? { yourTurn: your_turn } : {}) };
      if (format === 'csv') return sendCsv(reply, 'publisher-orders.csv', publisherOrderCsvColumns, eachOrder(pool, viewer, filters));
      reply.header('vary', 'Accept');
      const { items, total } = await listOrders(pool, viewer, filters, page, per_page);
      return { data: items, ...pageEnvelope(request, publicBaseUrl, { page, perPage: per_page, total, count: items.length }) };
    },
  );

  app.get(
    '/orders/:id',
    {
      config: auth,
      schema: {
        operationId: 'publisherGetOrder',
        summary: 'One order on this publisher’s outlets, with content and messages.',
        tags: ['Publisher'],
        security: bearerSecurity,
        params: idParam,
        response: { 200: one, ...errorResponses(...authErrors, 404, 422) },
      },
    },
    async (request) => ({ data: await getOrder(pool, { party: 'publisher', publisherId: publisherId(request) }, request.params.id) }),
  );

  app.get(
    '/orders/:id/messages',
    {
      config: auth,
      schema: {
        operationId: 'publisherListMessages',
        summary: "An order's messages, both sides', oldest first.",
        tags: ['Publisher'],
        security: bearerSecurity,
        params: idParam,
        querystring: z.strictObject(pageQuery),
        response: { 200: paginated(messageSchema), ...errorResponses(...authErrors, 404, 422) },
      },
    },
    async (request) => {
      const { page, per_page } = request.query;
      const viewer = { party: 'publisher' as const, publisherId: publisherId(request) };
      const { items, total } = await listMessages(pool, viewer, request.params.id, page, per_page);
      return { data: items, ...pageEnvelope(request, publicBaseUrl, { page, perPage: per_page, total, count: items.length }) };
    },
  );

  // An action on one order: one domain call, kept once under the request's Idempotency-Key if it sent one.
  const action = (
    path: string,
    operationId: string,
    summary: string,
    run: (pub: number, id: number, body: never, options: OnceOptions) => Promise<Kept<unknown>>,
    opts: { body?: z.ZodType; status?: number; response?: z.ZodType } = {},
  ) =>
    app.post(
      path,
      {
        ...(opts.body === contentBody ? { bodyLimit: BODY_LIMITS.content } : {}),
        config: { ...auth, idempotency: 'optional' },
        schema: {
          operationId,
          summary,
          tags: ['Publisher'],
          security: bearerSecurity,
          params: idParam,
          body: opts.body ?? emptyBody,
          response: { [opts.status ?? 200]: opts.response ?? one, ...errorResponses(...authErrors, 400, 404, 409, 413, 422) },
        },
      },
      async (request, reply) => {
        const kept = await run(publisherId(request), (request as ActionRequest).params.id, request.body as never, onceFor(request));
        return sendKept(request, reply, kept, opts.status ?? 200);
      },
    );

  action('/orders/:id/accept', 'publisherAccept', 'Accept an order (→ writing, or → publishing when the buyer supplied the content).', (pub, id, _b, once) =>
    publisherOrders.accept(actions, pub, id, once),
  );
  action('/orders/:id/decline', 'publisherDecline', 'Decline an order with a reason; the buyer is refunded.', (pub, id, b: z.infer<typeof declineBody>, once) =>
    publisherOrders.decline(actions, pub, id, b.reason, once),
    { body: declineBody },
  );
  action('/orders/:id/draft', 'publisherSubmitDraft', 'Submit a draft (writing → draft_review), or a revised draft while in draft_review.', (pub, id, b: z.infer<typeof contentBody>, once) =>
    publisherOrders.submitDraft(actions, pub, id, b, once),
    { body: contentBody },
  );
  action('/orders/:id/publish', 'publisherPublish', 'Report the live placement (publishing → live_review); the URL must be on the outlet’s domain.', (pub, id, b: z.infer<typeof publishBody>, once) =>
    publisherOrders.publish(actions, pub, id, b.live_url, once),
    { body: publishBody },
  );
  app.post(
    '/orders/:id/recheck',
    {
      config: auth,
      schema: {
        operationId: 'publisherRecheck',
        summary: 'Check the live placement again now (live_review or link_lost); answers with the new live_checks.',
        description:
          'Fetches live_url and runs the link checks in this request (up to LINK_CHECK_TIMEOUT_MS). In link_lost, a passing check restores the order to completed. No Idempotency-Key: a re-check may be repeated, at most once a minute per order (429 rate_limited with Retry-After and retry_after otherwise).',
        tags: ['Publisher'],
        security: bearerSecurity,
        params: idParam,
        body: emptyBody,
        response: { 200: one, ...errorResponses(...authErrors, 400, 404, 409, 413, 422) },
      },
    },
    async (request) => ({ data: await linkChecker.recheck(publisherId(request), request.params.id) }),
  );

  action('/orders/:id/messages', 'publisherSendMessage', 'Send a message to the buyer.', (pub, id, b: z.infer<typeof messageBody>, once) =>
    publisherOrders.message(actions, pub, id, b.body, once),
    { body: messageBody, status: 201, response: z.object({ data: messageSchema }) },
  );
};
