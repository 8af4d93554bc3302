import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { FastifyRequest } from 'fastify';
import type pg from 'pg';
import { z } from 'zod';
import { invalidInput } from '../../domain/errors.js';
import { positionOf } from '../../domain/events/event-types.js';
import { type EventView, followEvents, listEvents } from '../../domain/events/feed.js';
import type { Viewer } from '../../domain/orders/order-read.js';
import { authErrors, bearerSecurity, errorResponses } from '../../schemas/common.js';
import { EVENT_PAGE_DEFAULTS, eventQuery, followPage, publisherEvent, workspaceEvent } from '../../schemas/events.js';
import { pageEnvelope, paginated } from '../../schemas/pagination.js';

// Events hold what the order, message or endpoint schemas produced when they were written.
const stored = (items: EventView[]) => items as never[];

export interface EventRouteDeps {
  pool: pg.Pool;
  publicBaseUrl: string | undefined;
  /** Whose events: the key's workspace (buyer routes) or the key's publisher (under /publisher). */
  party: Viewer['party'];
  owner: (request: FastifyRequest) => Viewer;
}

/** GET /events: a workspace's or a publisher's event feed, paged newest first or followed oldest first. */
export const eventRoutes: FastifyPluginAsyncZod<EventRouteDeps> = async (app, { pool, publicBaseUrl, party, owner }) => {
  const event = party === 'buyer' ? workspaceEvent : publisherEvent;
  app.get(
    '/events',
    {
      ...(party === 'publisher' ? { config: { auth: 'publisher' as const } } : {}),
      schema: {
        operationId: party === 'buyer' ? 'listEvents' : 'publisherListEvents',
        summary:
          party === 'buyer'
            ? "The workspace's events: newest first a page at a time, or with `after` every event since the one named, oldest first."
            : "The publisher's events: newest first a page at a time, or with `after` every event since the one named, oldest first.",
        description:
          'Events are kept at least 30 days. An event appears here within a second of its change committing, and a follower ' +
          'reading `after` the last id it saw never misses one, however late a concurrent change commits.',
        tags: [party === 'buyer' ? 'Events' : 'Publisher'],
        security: bearerSecurity,
        querystring: eventQuery,
        response: { 200: z.union([paginated(event), followPage(event)]), ...errorResponses(...authErrors, 404, 422) },
      },
    },
    async (request) => {
      const q = request.query;
      const filters = { ...(q.type ? { type: q.type } : {}), ...(q.order_id !== undefined ? { orderId: q.order_id } : {}) };
      if (q.after !== undefined) {
        if (q.page !== undefined || q.per_page !== undefined) {
          throw invalidInput({ [q.page !== undefined ? 'page' : 'per_page']: ['cannot be combined with after (use limit)'] });
        }
        const limit = q.limit ?? EVENT_PAGE_DEFAULTS.limit;
        const { items, hasMore } = await followEvents(pool, owner(request), filters, positionOf(q.after, 'after'), limit);
        return { data: stored(items), has_more: hasMore };
      }
      if (q.limit !== undefined) throw invalidInput({ limit: ['needs after (use per_page for pages)'] });
      const page = q.page ?? EVENT_PAGE_DEFAULTS.page;
      const perPage = q.per_page ?? EVENT_PAGE_DEFAULTS.per_page;
      const { items, total } = await listEvents(pool, owner(request), filters, page, perPage);
      return { data: stored(items), ...pageEnvelope(request, publicBaseUrl, { page, perPage, total, count: items.length }) };
    },
  );
};
