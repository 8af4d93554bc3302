import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Kept, OnceOptions } from '../../domain/idempotency/record-once.js';
import type { Asked } from '../../domain/approvals/ask.js';
import { buyerOrders } from '../../domain/orders/buyer-actions.js';
import { eachOrder, getOrder, listMessages, listOrders } from '../../domain/orders/order-read.js';
import { type ApprovalDeps, approveOrAsk, isAsked, placeOrAsk } from '../../domain/approvals/ask.js';
import { approvalRequest } from '../../schemas/approvals.js';
import { workspacePrincipal } from '../plugins/auth.js';
import { onceFor, sendKept } from '../plugins/idempotency.js';
import { authErrors, bearerSecurity, errorResponses } from '../../schemas/common.js';
import { buyerOrder, buyerOrderCsvColumns, contentBody, emptyBody, messageBody, messageSchema, orderListQuery, placeOrdersBody } from '../../schemas/orders.js';
import { idParam } from '../../schemas/outlets.js';
import { pageEnvelope, paginated, pageQuery } from '../../schemas/pagination.js';
import { BODY_LIMITS } from '../body-limits.js';
import { listFormat, sendCsv } from '../negotiate.js';
import type { Services } from '../../domain/services/services.js';

export interface OrderRouteDeps extends Pick<Services, 'pool' | 'clock' | 'durations'> {
  publicBaseUrl: string | undefined;
}

/**
 * Sends what a call that may ask a person answers: its own value with `status`, or, when the key
 * must wait for a person (docs/approvals.md), 202 with the approval request and its address.
 */
function sendOrAsked<T>(request: FastifyRequest, reply: FastifyReply, kept: Kept<T | Asked>, status: number) {
  if (kept.ok && isAsked(kept.value)) {
    const asked = kept.value.approval_request;
    reply.header('location', `/api/v1/approval-requests/${asked.id}`);
    return sendKept(request, reply, { ...kept, value: asked }, 202);
  }
  return sendKept(request, reply, kept, status);
}

const askedResponse = {
  202: z
    .object({ data: approvalRequest })
    .describe("A person must approve this first (the key's needs_approval, or the workspace's approval_above_cents): nothing was spent; the request waits, at Location. Show approve_url to the user."),
};

/** `approvalBaseUrl`: the console's address, for an approval request's `approve_url`. */
export const orderRoutes: FastifyPluginAsyncZod<OrderRouteDeps & Pick<Services, 'placementGroups' | 'approvalBaseUrl'>> = async (app, deps) => {
  const { pool, clock, durations, placementGroups, publicBaseUrl, approvalBaseUrl } = deps;
  const approvals: ApprovalDeps = { pool, clock, durations, baseUrl: approvalBaseUrl };
  const one = (schema = buyerOrder) => z.object({ data: schema });

  app.post(
    '/orders',
    {
      config: { spending: true, idempotency: 'required' },
      bodyLimit: BODY_LIMITS.content,
      schema: {
        operationId: 'placeOrders',
        summary:
          'Buy offers: one order per offer, all or nothing; the total moves from your balance into escrow. Needs a spending key and an Idempotency-Key. ' +
          'When a person must approve it (docs/approvals.md), 202 with an approval request instead: nothing is held until they do.',
        tags: ['Orders'],
        security: bearerSecurity,
        body: placeOrdersBody,
        response: { 201: z.object({ data: z.array(buyerOrder) }), ...askedResponse, ...errorResponses(...authErrors, 400, 402, 409, 413, 422) },
      },
    },
    async (request, reply) => {
      const kept = await placeOrAsk(placementGroups, approvals, workspacePrincipal(request), request.body, onceFor(request));
      return sendOrAsked(request, reply, kept, 201);
    },
  );

  app.get(
    '/orders',
    {
      config: { csv: buyerOrderCsvColumns },
      schema: {
        operationId: 'listOrders',
        summary: "The workspace's orders, newest first. With Accept: text/csv, every matching order as CSV (page and per_page ignored).",
        tags: ['Orders'],
        security: bearerSecurity,
        querystring: orderListQuery,
        response: { 200: paginated(buyerOrder), ...errorResponses(...authErrors, 406, 422) },
      },
    },
    async (request, reply) => {
      const { page, per_page, status, your_turn } = request.query;
      const format = listFormat(request);
      const viewer = { party: 'buyer' as const, workspaceId: workspacePrincipal(request).workspaceId };
      const filters = { ...(status ? { status } : {}), ...(your_turn !== undefined ? { yourTurn: your_turn } : {}) };
      if (format === 'csv') return sendCsv(reply, 'orders.csv', buyerOrderCsvColumns, eachOrder(pool, viewer, filters));
      reply.header('vary', 'Accept');
      const { items, total } = await listOrders(pool, viewer, filters, page, per_page);
      return { data: items, ...pageEnvelope(request, publicBaseUrl, { page, perPage: per_page, total, count: items.length }) };
    },
  );

  app.get(
    '/orders/:id',
    {
      schema: {
        operationId: 'getOrder',
        summary: 'One order: status, whose turn, deadlines, live link, latest content with checks, messages.',
        tags: ['Orders'],
        security: bearerSecurity,
        params: idParam,
        response: { 200: one(), ...errorResponses(...authErrors, 404, 422) },
      },
    },
    async (request) => ({ data: await getOrder(pool, { party: 'buyer', workspaceId: workspacePrincipal(request).workspaceId }, request.params.id) }),
  );

  app.get(
    '/orders/:id/messages',
    {
      schema: {
        operationId: 'listOrderMessages',
        summary: "An order's messages, both sides', oldest first.",
        tags: ['Orders'],
        security: bearerSecurity,
        params: idParam,
        querystring: z.strictObject(pageQuery),
        response: { 200: paginated(messageSchema), ...errorResponses(...authErrors, 404, 422) },
      },
    },
    async (request) => {
      const { page, per_page } = request.query;
      const viewer = { party: 'buyer' as const, workspaceId: workspacePrincipal(request).workspaceId };
      const { items, total } = await listMessages(pool, viewer, request.params.id, page, per_page);
      return { data: items, ...pageEnvelope(request, publicBaseUrl, { page, perPage: per_page, total, count: items.length }) };
    },
  );

  // An action on one order: one domain call, kept once under the request's Idempotency-Key if it sent one.
  const action = (
    path: string,
    operationId: string,
    summary: string,
    run: (request: ActionRequest, options: OnceOptions) => Promise<Kept<unknown>>,
    opts: { spending?: boolean; body?: z.ZodType; status?: number; response?: z.ZodType; mayAsk?: boolean } = {},
  ) =>
    app.post(
      path,
      {
        ...(opts.body === contentBody ? { bodyLimit: BODY_LIMITS.content } : {}),
        config: { idempotency: 'optional', ...(opts.spending ? { spending: true } : {}) },
        schema: {
          operationId,
          summary,
          tags: ['Orders'],
          security: bearerSecurity,
          params: idParam,
          body: opts.body ?? emptyBody,
          response: { [opts.status ?? 200]: opts.response ?? one(), ...(opts.mayAsk ? askedResponse : {}), ...errorResponses(...authErrors, 400, 404, 409, 413, 422) },
        },
      },
      async (request, reply) => {
        return sendOrAsked(request, reply, await run(request as ActionRequest, onceFor(request)), opts.status ?? 200);
      },
    );
  const actions = { pool, clock, durations };

  action('/orders/:id/content', 'submitContent', 'Supply the content of an order that is waiting for it (awaiting_content).', (r, once) =>
    buyerOrders.submitContent(actions, workspacePrincipal(r), r.params.id, r.body as z.infer<typeof contentBody>, once),
    { body: contentBody },
  );
  action('/orders/:id/approve-draft', 'approveDraft', "Approve the publisher's draft (draft_review → publishing).", (r, once) =>
    buyerOrders.approveDraft(actions, workspacePrincipal(r), r.params.id, once),
  );
  action(
    '/orders/:id/approve',
    'approvePlacement',
    'Approve the live placement: pays the publisher from escrow (live_review → completed). Needs a spending key; for a key that needs approval, 202 with an approval request.',
    (r, once) => approveOrAsk(approvals, workspacePrincipal(r), r.params.id, once),
    { spending: true, mayAsk: true },
  );
  action('/orders/:id/cancel', 'cancelOrder', 'Cancel an order the publisher has not accepted yet; the price returns to your balance.', (r, once) =>
    buyerOrders.cancel(actions, workspacePrincipal(r), r.params.id, once),
  );
  action('/orders/:id/messages', 'sendOrderMessage', 'Send a message to the publisher (e.g. to ask for changes to a draft).', (r, once) =>
    buyerOrders.message(actions, workspacePrincipal(r), r.params.id, (r.body as z.infer<typeof messageBody>).body, once),
    { body: messageBody, status: 201, response: z.object({ data: messageSchema }) },
  );
};

/** A request to an order action: its id validated by `idParam`, its body by the action's schema. */
export type ActionRequest = FastifyRequest & { params: { id: number }; body: unknown };
