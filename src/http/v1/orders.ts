import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type pg from 'pg';
import { z } from 'zod';
import { GroupCommit } from '../../db/group-commit.js';
import type { Clock } from '../../domain/clock.js';
import { isDatabaseUnavailable } from '../../db/errors.js';
import { DomainError } from '../../domain/errors.js';
import { buyerActions } from '../../domain/orders/buyer-actions.js';
import { getOrder, listMessages, listOrders } from '../../domain/orders/order-read.js';
import { assertNothingPlaced, guardedPlacement, placementLock, placementLocks, placeOrders } from '../../domain/orders/place-orders.js';
import type { Durations } from '../../domain/orders/states.js';
import { workspacePrincipal } from '../plugins/auth.js';
import { idempotent, inProgress } from '../plugins/idempotency.js';
import { type Answer, batchIdentity, type BatchedRequest, runIdempotentBatch } from '../plugins/idempotent-batch.js';
import { authErrors, bearerSecurity, errorResponses } from '../../schemas/common.js';
import { buyerOrder, contentBody, emptyBody, messageBody, messageSchema, orderListQuery, placeOrdersBody } from '../../schemas/orders.js';
import { idParam } from '../../schemas/outlets.js';
import { pageEnvelope, paginated, pageQuery } from '../../schemas/pagination.js';
import { BODY_LIMITS } from '../body-limits.js';

export interface OrderRouteDeps {
  pool: pg.Pool;
  clock: Clock;
  durations: Durations;
  publicBaseUrl: string | undefined;
}

type PlaceOrdersBody = z.infer<typeof placeOrdersBody>;

/** A placement waiting for its workspace's turn: one that can join a group, or one that runs alone. */
interface PlacementJob {
  workspaceId: number;
  identity: string;
  /** How many orders it places. */
  orders: number;
  together?: () => BatchedRequest;
  alone?: () => Promise<unknown>;
}
/** The most orders a group places (a placement may hold up to 50): it bounds the group's SQL text. */
const MAX_GROUP_ORDERS = 100;
/**
 * How long a group waits for a lock (a workspace's balance rows held by another transaction)
 * before it fails and its placements run again alone: the others in it then wait no longer.
 */
const GROUP_LOCK_TIMEOUT_MS = 250;

export const orderRoutes: FastifyPluginAsyncZod<OrderRouteDeps> = async (app, deps) => {
  const { pool, clock, durations, publicBaseUrl } = deps;
  const actions = buyerActions(durations);
  const one = (schema = buyerOrder) => z.object({ data: schema });
  // Placements are committed in groups (group commit): those that arrive while `inFlight` groups
  // run wait here, holding no connection, and then go together, in one transaction of two round
  // trips (runIdempotentBatch) that takes every balance lock it needs at once, in the contract's
  // order. A workspace has one group or lone placement running at a time per process, so groups
  // never wait for each other here; the row locks still decide between processes. A group that
  // waits for a lock longer than GROUP_LOCK_TIMEOUT_MS, or fails, puts its placements back to run
  // alone, so a lock held elsewhere or a failing request holds up only its own workspace. A
  // placement with content reads the context before it writes, so it always runs alone. Waiting
  // here longer than a request may wait for a connection is the same 503.
  const placing = new GroupCommit<PlacementJob, Answer | null>({
    // Half the pool for groups. Lone placements are not counted: each workspace has at most one,
    // which may wait on a lock held elsewhere, tying up one connection (two before groups), so as
    // many workspaces held elsewhere as the pool has connections would still exhaust it.
    inFlight: Math.max(1, Math.ceil((pool.options.max ?? 10) / 2)),
    maxWeight: MAX_GROUP_ORDERS,
    weightOf: (job) => job.orders,
    maxWaitMs: pool.options.connectionTimeoutMillis ?? 2_000,
    timedOut: () => new DomainError('unavailable', 'Too many orders are being placed at once. Retry shortly.'),
    laneOf: (job) => job.workspaceId,
    // A retry while its first request waits or runs here: 409, as one in another process gets.
    identityOf: (job) => job.identity,
    identityInUse: inProgress,
    alone: (job) => job.alone !== undefined,
    // No connection to be had: each placement gets the 503 now rather than wait for another.
    retryAlone: (error) => !isDatabaseUnavailable(error),
    run: async (jobs, mode) => {
      const first = jobs[0]!;
      // A lone job's error is its own (GroupCommit answers it with what this throws).
      if (first.alone) {
        await first.alone();
        return [{ ok: true, value: null }];
      }
      return runIdempotentBatch(
        { pool, clock },
        (group) => [placementLocks(group.map((r) => workspacePrincipal(r.request).workspaceId))],
        jobs.map((j) => j.together!()),
        mode === 'group' ? GROUP_LOCK_TIMEOUT_MS : undefined,
      );
    },
  });
  const placeWithContent = idempotent(
    { pool, clock },
    async (request, tx, { now, lead }) => {
      const data = await placeOrders(tx, workspacePrincipal(request), request.body as PlaceOrdersBody, now, durations, lead);
      return { status: 201, body: { data } };
    },
    // The balance lock travels with BEGIN (see placementLock).
    (request) => [placementLock(workspacePrincipal(request))],
  );
  // Built when its group runs, so the order's time is when it is placed, not when it arrived.
  const together = (request: FastifyRequest): BatchedRequest => {
    const principal = workspacePrincipal(request);
    const input = request.body as PlaceOrdersBody;
    const now = clock.now();
    return {
      request,
      now,
      lead: [guardedPlacement(principal, input, now, durations)],
      handle: async (tx, ran) => ({ status: 201, body: { data: await placeOrders(tx, principal, input, now, durations, ran) } }),
      assertUnwritten: (ran) => assertNothingPlaced(ran.at(-1)),
    };
  };

  app.post(
    '/orders',
    {
      config: { spending: true, idempotency: 'required' },
      bodyLimit: BODY_LIMITS.content,
      schema: {
        operationId: 'placeOrders',
        summary: 'Buy offers: one order per offer, all or nothing; the total moves from your balance into escrow. Needs a spending key and an Idempotency-Key.',
        tags: ['Orders'],
        security: bearerSecurity,
        body: placeOrdersBody,
        response: { 201: z.object({ data: z.array(buyerOrder) }), ...errorResponses(...authErrors, 400, 402, 409, 413, 422) },
      },
    },
    async (request, reply) => {
      const job = {
        workspaceId: workspacePrincipal(request).workspaceId,
        identity: batchIdentity(request),
        orders: (request.body as PlaceOrdersBody).offer_ids.length,
      };
      if ((request.body as PlaceOrdersBody).content !== undefined) {
        await placing.run({ ...job, alone: () => placeWithContent(request, reply) });
        return reply;
      }
      const answer = (await placing.run({ ...job, together: () => together(request) }))!;
      // The stored JSON text, as the single path sends it (a replay must send the same bytes).
      const raw = reply as FastifyReply;
      if (answer.replayed) raw.header('idempotent-replayed', 'true');
      return raw.code(answer.status).type('application/json; charset=utf-8').send(answer.json);
    },
  );

  app.get(
    '/orders',
    {
      schema: {
        operationId: 'listOrders',
        summary: "The workspace's orders, newest first.",
        tags: ['Orders'],
        security: bearerSecurity,
        querystring: orderListQuery,
        response: { 200: paginated(buyerOrder), ...errorResponses(...authErrors, 422) },
      },
    },
    async (request) => {
      const { page, per_page, status, your_turn } = request.query;
      const viewer = { party: 'buyer' as const, workspaceId: workspacePrincipal(request).workspaceId };
      const { items, total } = await listOrders(pool, viewer, { ...(status ? { status } : {}), ...(your_turn !== undefined ? { yourTurn: your_turn } : {}) }, page, per_page);
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

  const action = (
    path: string,
    operationId: string,
    summary: string,
    run: (request: { params: { id: number }; body: unknown }, tx: Parameters<Parameters<typeof idempotent>[1]>[1]) => Promise<unknown>,
    opts: { spending?: boolean; body?: z.ZodType; status?: number; response?: z.ZodType } = {},
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
          response: { [opts.status ?? 200]: opts.response ?? one(), ...errorResponses(...authErrors, 400, 404, 409, 413, 422) },
        },
      },
      idempotent({ pool, clock }, async (request, tx) => ({
        status: opts.status ?? 200,
        body: { data: await run(request as never, tx) },
      })),
    );

  action('/orders/:id/content', 'submitContent', 'Supply the content of an order that is waiting for it (awaiting_content).', (r, tx) =>
    actions.submitContent(tx, workspacePrincipal(r as never), r.params.id, r.body as z.infer<typeof contentBody>, clock.now()),
    { body: contentBody },
  );
  action('/orders/:id/approve-draft', 'approveDraft', "Approve the publisher's draft (draft_review → publishing).", (r, tx) =>
    actions.approveDraft(tx, workspacePrincipal(r as never), r.params.id, clock.now()),
  );
  action('/orders/:id/approve', 'approvePlacement', 'Approve the live placement: pays the publisher from escrow (live_review → completed). Needs a spending key.', (r, tx) =>
    actions.approvePlacement(tx, workspacePrincipal(r as never), r.params.id, clock.now()),
    { spending: true },
  );
  action('/orders/:id/cancel', 'cancelOrder', 'Cancel an order the publisher has not accepted yet; the price returns to your balance.', (r, tx) =>
    actions.cancel(tx, workspacePrincipal(r as never), r.params.id, clock.now()),
  );
  action('/orders/:id/messages', 'sendOrderMessage', 'Send a message to the publisher (e.g. to ask for changes to a draft).', (r, tx) =>
    actions.message(tx, workspacePrincipal(r as never), r.params.id, (r.body as z.infer<typeof messageBody>).body, clock.now()),
    { body: messageBody, status: 201, response: z.object({ data: messageSchema }) },
  );
};
