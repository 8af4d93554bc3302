import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { DomainError } from '../../domain/errors.js';
import { getOrder, listMessages, listOrders } from '../../domain/orders/order-read.js';
import { publisherActions } from '../../domain/orders/publisher-actions.js';
import type { Tx } from '../../db/tx.js';
import { idempotent } from '../plugins/idempotency.js';
import { authErrors, bearerSecurity, errorResponses } from '../../schemas/common.js';
import { contentBody, declineBody, emptyBody, messageBody, messageSchema, orderListQuery, publishBody, publisherOrder } from '../../schemas/orders.js';
import { idParam } from '../../schemas/outlets.js';
import { pageEnvelope, paginated, pageQuery } from '../../schemas/pagination.js';
import type { OrderRouteDeps } from './orders.js';
import { BODY_LIMITS } from '../body-limits.js';

export function publisherId(request: FastifyRequest): number {
  const id = request.principal?.publisherId;
  if (id === null || id === undefined) throw new DomainError('forbidden', 'This route needs a publisher key.');
  return id;
}

/** The publisher side (docs/orders.md): orders on the publisher's own outlets only. */
export const publisherRoutes: FastifyPluginAsyncZod<OrderRouteDeps> = async (app, { pool, clock, durations, publicBaseUrl }) => {
  const actions = publisherActions(durations);
  const auth = { auth: 'publisher' as const };
  const one = z.object({ data: publisherOrder });

  app.get(
    '/orders',
    {
      config: auth,
      schema: {
        operationId: 'publisherListOrders',
        summary: "Orders on this publisher's outlets, newest first.",
        tags: ['Publisher'],
        security: bearerSecurity,
        querystring: orderListQuery,
        response: { 200: paginated(publisherOrder), ...errorResponses(...authErrors, 422) },
      },
    },
    async (request) => {
      const { page, per_page, status, your_turn } = request.query;
      const { items, total } = await listOrders(
        pool,
        { party: 'publisher', publisherId: publisherId(request) },
        { ...(status ? { status } : {}), ...(your_turn !== undefined ? { yourTurn: your_turn } : {}) },
        page,
        per_page,
      );
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

  const action = (
    path: string,
    operationId: string,
    summary: string,
    run: (pub: number, id: number, body: never, tx: Tx) => Promise<unknown>,
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
      idempotent({ pool, clock }, async (request, tx) => ({
        status: opts.status ?? 200,
        body: { data: await run(publisherId(request), (request.params as { id: number }).id, request.body as never, tx) },
      })),
    );

  action('/orders/:id/accept', 'publisherAccept', 'Accept an order (→ writing, or → publishing when the buyer supplied the content).', (pub, id, _b, tx) =>
    actions.accept(tx, pub, id, clock.now()),
  );
  action('/orders/:id/decline', 'publisherDecline', 'Decline an order with a reason; the buyer is refunded.', (pub, id, b: z.infer<typeof declineBody>, tx) =>
    actions.decline(tx, pub, id, b.reason, clock.now()),
    { body: declineBody },
  );
  action('/orders/:id/draft', 'publisherSubmitDraft', 'Submit a draft (writing → draft_review), or a revised draft while in draft_review.', (pub, id, b: z.infer<typeof contentBody>, tx) =>
    actions.submitDraft(tx, pub, id, b, clock.now()),
    { body: contentBody },
  );
  action('/orders/:id/publish', 'publisherPublish', 'Report the live placement (publishing → live_review); the URL must be on the outlet’s domain.', (pub, id, b: z.infer<typeof publishBody>, tx) =>
    actions.publish(tx, pub, id, b.live_url, clock.now()),
    { body: publishBody },
  );
  action('/orders/:id/messages', 'publisherSendMessage', 'Send a message to the buyer.', (pub, id, b: z.infer<typeof messageBody>, tx) =>
    actions.message(tx, pub, id, b.body, clock.now()),
    { body: messageBody, status: 201, response: z.object({ data: messageSchema }) },
  );
};
