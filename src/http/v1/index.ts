import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { errorResponses } from '../../schemas/common.js';
import { ledgerRoutes } from './ledger.js';
import { meRoutes } from './me.js';
import { outletRoutes } from './outlets.js';
import { planRoutes } from './plan.js';
import { orderRoutes } from './orders.js';
import { approvalRoutes } from './approvals.js';
import { topUpRoutes } from './top-ups.js';
import { publisherPayoutRoutes } from './publisher-payouts.js';
import { publisherId, publisherRoutes } from './publisher.js';
import { eventRoutes } from './events.js';
import { webhookEndpointRoutes } from './webhook-endpoints.js';
import { statementRoutes } from './statements.js';
import type { OutboundPolicy } from '../../outbound/address-policy.js';
import { workspacePrincipal } from '../plugins/auth.js';
import type { Limiter } from '../plugins/rate-limit.js';
import type { Services } from '../../domain/services/services.js';

const buyerAndPublisherRoutes: FastifyPluginAsyncZod<
  Pick<Services, 'pool' | 'search' | 'workspaces' | 'approvalBaseUrl' | 'clock' | 'durations' | 'placementGroups' | 'linkChecker' | 'webhookSecrets' | 'billing'> & {
    publicBaseUrl: string | undefined;
    outboundPolicy: OutboundPolicy;
    limiter: Limiter;
  }
> = async (app, { pool, search, workspaces, publicBaseUrl, approvalBaseUrl, clock, durations, placementGroups, outboundPolicy, linkChecker, limiter, webhookSecrets, billing }) => {
  // A route that names no query parameters takes none: `POST /orders?dry_run=true` must not place
  // an order as if the parameter meant something (list endpoints name theirs, strictly too).
  app.addHook('onRoute', (route) => {
    if (route.schema?.querystring) return;
    const response = route.schema?.response as Record<string, unknown> | undefined;
    route.schema = {
      ...route.schema,
      querystring: z.strictObject({}),
      // An unknown parameter is a 422 naming it, which the document then says.
      ...(response && !response[422] ? { response: { ...response, 422: errorResponses(422)[422] } } : {}),
    };
  });
  await app.register(meRoutes, { workspaces });
  await app.register(ledgerRoutes, { pool, publicBaseUrl });
  await app.register(outletRoutes, { pool, search, publicBaseUrl });
  await app.register(planRoutes, { pool, search, clock });
  await app.register(orderRoutes, { pool, clock, durations, placementGroups, publicBaseUrl, approvalBaseUrl });
  await app.register(approvalRoutes, { pool, clock, durations, baseUrl: approvalBaseUrl, publicBaseUrl });
  await app.register(topUpRoutes, { billing, publicBaseUrl });
  await app.register(publisherRoutes, { prefix: '/publisher', pool, clock, durations, publicBaseUrl, linkChecker });
  await app.register(publisherPayoutRoutes, { prefix: '/publisher', billing, publicBaseUrl });
  const parties = [
    { party: 'buyer' as const, owner: (request: FastifyRequest) => ({ party: 'buyer' as const, workspaceId: workspacePrincipal(request).workspaceId }) },
    { prefix: '/publisher', party: 'publisher' as const, owner: (request: FastifyRequest) => ({ party: 'publisher' as const, publisherId: publisherId(request) }) },
  ];
  for (const p of parties) {
    await app.register(eventRoutes, { ...p, pool, publicBaseUrl });
    const owner = p.party === 'buyer'
      ? (request: FastifyRequest) => ({ kind: 'workspace' as const, id: workspacePrincipal(request).workspaceId })
      : (request: FastifyRequest) => ({ kind: 'publisher' as const, id: publisherId(request) });
    await app.register(statementRoutes, { ...(p.prefix ? { prefix: p.prefix } : {}), party: p.party, owner, pool, clock });
    await app.register(webhookEndpointRoutes, { ...p, pool, clock, publicBaseUrl, outboundPolicy, secrets: webhookSecrets, limiter });
  }
};

/** The buyer API, encapsulated; the app's plugins whose objects its routes are handed come first. */
export const v1Routes = fp(buyerAndPublisherRoutes, {
  name: 'v1-routes',
  encapsulate: true,
  dependencies: ['search-engine', 'workspaces', 'placement-groups', 'link-checker'],
});
