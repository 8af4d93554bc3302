import { z } from 'zod';
import { eventId, eventTypes, positionOf } from '../../domain/events/event-types.js';
import { followEvents, latestEvents } from '../../domain/events/feed.js';
import { workspaceEvent } from '../../schemas/events.js';
import { annotations, defineTool, type ToolContext } from '../tool.js';

const workspace = (ctx: ToolContext) => ({ party: 'buyer' as const, workspaceId: ctx.principal.workspaceId });

export const listEvents = defineTool({
  name: 'list-events',
  title: 'List what changed',
  description:
    "What happened in the workspace since the event id you last saw, oldest first: orders placed, accepted, declined, drafts submitted " +
    'and approved, placements published and completed, link checks failed, links lost, restored or refunded, cancellations and ' +
    'expiries (previous_status: the state it expired in), ' +
    'messages received from publishers, top-ups. Each event carries the order (or message, or top-up) as get-order would show it ' +
    'right after the change. Free; changes nothing. Keep next_after and pass it as after next time: no event is ever skipped or ' +
    'repeated. Without after: the latest events. Use it instead of polling list-orders or every order.',
  input: z.strictObject({
    after: z.string().max(40).optional().describe('An event id (evt_…) from a previous call: only events after it. Left out: the latest events.'),
    limit: z.number({ error: 'must be an integer' }).int('must be an integer').min(1, 'must be at least 1').max(100, 'must be at most 100').default(50)
      .describe('At most this many events, 1..100 (default 50).'),
    type: z.enum(eventTypes).optional().describe(`Only events of this type: ${eventTypes.join(', ')}.`),
    order_id: z.number({ error: 'must be an integer id' }).int('must be an integer id').min(1, 'must be a positive integer id').optional()
      .describe("Only events about this order, one of the workspace's own (any other id is not_found)."),
  }),
  output: z.object({
    events: z.array(workspaceEvent),
    has_more: z.boolean().describe('More events are waiting: call again at once with after = next_after.'),
    next_after: z.string().describe('Pass as after next time (the last event id seen, or the one you gave when nothing is new).'),
  }),
  annotations: annotations.read,
  run: async (ctx, { after, limit, type, order_id }) => {
    const filters = { ...(type ? { type } : {}), ...(order_id !== undefined ? { orderId: order_id } : {}) };
    const start = after === undefined ? undefined : positionOf(after, 'after');
    const page =
      start === undefined
        ? { items: await latestEvents(ctx.pool, workspace(ctx), filters, limit), hasMore: false }
        : await followEvents(ctx.pool, workspace(ctx), filters, start, limit);
    const last = page.items[page.items.length - 1]?.id ?? after ?? eventId(0);
    return { events: page.items as never[], has_more: page.hasMore, next_after: last };
  },
});
