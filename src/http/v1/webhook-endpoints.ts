import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { FastifyRequest } from 'fastify';
import type pg from 'pg';
import { z } from 'zod';
import type { Clock } from '../../domain/clock.js';
import type { AuthMode } from '../plugins/auth.js';
import type { Viewer } from '../../domain/orders/order-read.js';
import { deleteEndpoint, listDeliveries, listEndpoints, RESENDS_PER_MINUTE, webhookEndpoints } from '../../domain/webhooks/endpoints.js';
import { DomainError } from '../../domain/errors.js';
import { ownerId } from '../../domain/events/event-types.js';
import type { Limiter } from '../plugins/rate-limit.js';
import type { OutboundPolicy } from '../../outbound/address-policy.js';
import type { SecretBox } from '../../domain/webhooks/secret-box.js';
import { onceFor, sendKept } from '../plugins/idempotency.js';
import { authErrors, bearerSecurity, errorResponses } from '../../schemas/common.js';
import { webhookDelivery, webhookEndpoint, webhookEndpointBody, webhookEndpointWithSecret } from '../../schemas/events.js';
import { idParam } from '../../schemas/outlets.js';
import { pageEnvelope, paginated, pageQuery } from '../../schemas/pagination.js';

export interface WebhookRouteDeps {
  pool: pg.Pool;
  clock: Clock;
  publicBaseUrl: string | undefined;
  outboundPolicy: OutboundPolicy;
  secrets: SecretBox;
  /** Counts resends, per owner and endpoint (the per-key limiter's store, its own buckets). */
  limiter: Limiter;
  party: Viewer['party'];
  owner: (request: FastifyRequest) => Viewer;
}

const deliveryParams = z.object({ id: idParam.shape.id, delivery_id: idParam.shape.id });

/** /webhook-endpoints: a workspace's (or, under /publisher, a publisher's) keys read its endpoints; keys with `manage_webhooks` change them. */
export const webhookEndpointRoutes: FastifyPluginAsyncZod<WebhookRouteDeps> = async (app, { pool, clock, publicBaseUrl, outboundPolicy, secrets, limiter, party, owner }) => {
  const config: { auth: AuthMode } = { auth: party === 'publisher' ? 'publisher' : 'buyer' };
  // POSTs take an optional Idempotency-Key, like every POST of the API: a retried creation
  // answers the same endpoint (and secret) instead of making a second one.
  const postConfig = { ...config, idempotency: 'optional' as const, manageWebhooks: true };
  // Reading the endpoints and their deliveries takes any key; changing them, `manage_webhooks`.
  const changeConfig = { ...config, manageWebhooks: true };
  const actions = { pool, clock, outboundPolicy, secrets };
  const tags = [party === 'buyer' ? 'Events' : 'Publisher'];
  const op = (name: string) => (party === 'buyer' ? name : `publisher${name[0]!.toUpperCase()}${name.slice(1)}`);
  const whose = party === 'buyer' ? "the workspace's" : "the publisher's";

  app.post(
    '/webhook-endpoints',
    {
      config: postConfig,
      schema: {
        operationId: op('createWebhookEndpoint'),
        summary: `Create a webhook endpoint for ${whose} events; the answer holds its signing secret, shown only now.`,
        tags,
        security: bearerSecurity,
        body: webhookEndpointBody,
        response: { 201: z.object({ data: webhookEndpointWithSecret }), ...errorResponses(...authErrors, 400, 409, 422) },
      },
    },
    async (request, reply) => {
      const once = onceFor(request);
      return sendKept(request, reply, await webhookEndpoints.create(actions, owner(request), request.body, once), 201);
    },
  );

  app.get(
    '/webhook-endpoints',
    {
      config,
      schema: {
        operationId: op('listWebhookEndpoints'),
        summary: `${whose[0]!.toUpperCase()}${whose.slice(1)} webhook endpoints (at most 20), oldest first; secrets are not shown.`,
        tags,
        security: bearerSecurity,
        response: { 200: z.object({ data: z.array(webhookEndpoint) }), ...errorResponses(...authErrors, 422) },
      },
    },
    async (request) => ({ data: await listEndpoints(pool, owner(request)) }),
  );

  app.delete(
    '/webhook-endpoints/:id',
    {
      config: changeConfig,
      schema: {
        operationId: op('deleteWebhookEndpoint'),
        summary: 'Delete a webhook endpoint and its delivery log; nothing more is sent to it.',
        tags,
        security: bearerSecurity,
        params: idParam,
        response: { 204: z.null().describe('Deleted.'), ...errorResponses(...authErrors, 404, 422) },
      },
    },
    async (request, reply) => {
      await deleteEndpoint(pool, owner(request), request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/webhook-endpoints/:id/rotate-secret',
    {
      config: postConfig,
      schema: {
        operationId: op('rotateWebhookSecret'),
        summary: 'A new signing secret; for a day deliveries carry signatures by both the new and the previous one.',
        tags,
        security: bearerSecurity,
        params: idParam,
        response: { 200: z.object({ data: webhookEndpointWithSecret }), ...errorResponses(...authErrors, 400, 404, 422) },
      },
    },
    async (request, reply) => {
      const once = onceFor(request);
      return sendKept(request, reply, await webhookEndpoints.rotateSecret(actions, owner(request), request.params.id, once), 200);
    },
  );

  app.get(
    '/webhook-endpoints/:id/deliveries',
    {
      config,
      schema: {
        operationId: op('listWebhookDeliveries'),
        summary: "An endpoint's delivery log, newest first: status, attempts, last response code and duration, next attempt.",
        tags,
        security: bearerSecurity,
        params: idParam,
        querystring: z.strictObject(pageQuery),
        response: { 200: paginated(webhookDelivery), ...errorResponses(...authErrors, 404, 422) },
      },
    },
    async (request) => {
      const { page, per_page } = request.query;
      const { items, total } = await listDeliveries(pool, owner(request), request.params.id, page, per_page);
      return { data: items, ...pageEnvelope(request, publicBaseUrl, { page, perPage: per_page, total, count: items.length }) };
    },
  );

  app.post(
    '/webhook-endpoints/:id/deliveries/:delivery_id/resend',
    {
      config: postConfig,
      schema: {
        operationId: op('resendWebhookDelivery'),
        summary: "Send a delivery's event to the endpoint again, as a new delivery due now (same webhook-id).",
        description: `At most ${RESENDS_PER_MINUTE} resends a minute per endpoint (besides the key's own limit): more answer 429 with Retry-After.`,
        tags,
        security: bearerSecurity,
        params: deliveryParams,
        response: { 202: z.object({ data: webhookDelivery }), ...errorResponses(...authErrors, 400, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const who = owner(request);
      const limit = await limiter.hit(`resend:${who.party}:${ownerId(who)}:${request.params.id}`, RESENDS_PER_MINUTE);
      if (limit.exceeded) {
        reply.header('retry-after', limit.retryAfterSeconds);
        throw new DomainError('rate_limited', `At most ${RESENDS_PER_MINUTE} resends a minute per endpoint; retry after the given number of seconds.`, {
          retry_after: limit.retryAfterSeconds,
        });
      }
      const once = onceFor(request);
      return sendKept(request, reply, await webhookEndpoints.resend(actions, who, request.params.id, request.params.delivery_id, once), 202);
    },
  );
};
