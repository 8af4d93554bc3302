import { z } from 'zod';
import { approvalEventTypes, eventActors, eventTypes, orderEventTypes } from '../domain/events/event-types.js';
import { approvalRequest } from './approvals.js';
import { orderStatuses } from '../domain/orders/states.js';
import { buyerOrder, messageSchema, publisherOrder } from './orders.js';
import { documentAs } from './param-docs.js';
import { balanceAdjustedData, balanceToppedUpData } from './top-ups.js';
import { payoutEventData } from './payouts.js';

export const webhookEndpoint = z
  .object({
    id: z.number().int(),
    url: z.string(),
    events: z.array(z.enum(eventTypes)).nullable().describe('The event types sent to this endpoint; null: every type, those added later too.'),
    disabled_at: z.string().nullable().describe('Set when deliveries kept failing for WEBHOOK_DISABLE_AFTER_HOURS; nothing is sent any more.'),
    created_at: z.string(),
  })
  .meta({ id: 'WebhookEndpoint', description: 'Where events are sent; its secret is shown only when created or rotated.' });

export const webhookEndpointWithSecret = webhookEndpoint
  .extend({
    secret: z.string().describe('whsec_ + base64: the Standard Webhooks signing secret. Shown only now; store it.'),
  })
  .meta({ id: 'WebhookEndpointWithSecret', description: 'A webhook endpoint with its signing secret, answered only at creation and rotation.' });

export const topUpData = z
  .object({
    workspace_id: z.number().int(),
    amount: z.number().int().describe('US cents added.'),
    amount_formatted: z.string(),
    balance: z.number().int().describe('The available balance after the top-up, in US cents.'),
    balance_formatted: z.string(),
  })
  .meta({ id: 'TopUp', description: 'Money added to the workspace.' });

export const budgetExhaustedData = z
  .object({
    key: z.object({ id: z.number().int(), name: z.string(), prefix: z.string() }).describe('The key whose order used up the window.'),
    window: z.enum(['day', 'month']).describe('The UTC calendar day or month.'),
    limit_cents: z.number().int().describe("The window's limit, in US cents."),
    spent_cents: z.number().int().describe('What was spent in the window: the whole limit.'),
    remaining_cents: z.number().int().describe('0: no order of this key (or of the keys it was rolled from) passes until resets_at.'),
    resets_at: z.string().describe('When the window starts again (ISO 8601, UTC).'),
    limit_formatted: z.string(),
    spent_formatted: z.string(),
    remaining_formatted: z.string(),
  })
  .meta({ id: 'BudgetExhausted', description: "A spending key's daily or monthly budget ran out (docs/budgets.md); sent once per window." });

export const messageEventData = messageSchema
  .extend({ order_id: z.number().int() })
  .meta({ id: 'ReceivedMessage', description: 'A message from the other party, with the order it belongs to.' });

const envelope = {
  id: z.string().describe('evt_ and 16 digits: unique, and sorting as text in the order events entered the feed.'),
  created_at: z.string().describe('When the change happened (ISO 8601, UTC).'),
  actor: z.enum(eventActors).describe('Who caused it: a party, or the service itself (deadlines, top-ups, deliveries).'),
  previous_status: z
    .enum(orderStatuses)
    .nullable()
    .describe("Order events: the state the order left (for order.expired, the state it expired in); null when it did not change state or for other events."),
};

/**
 * The events of one party, as a union discriminated by `type` (no two members share a type), each
 * member with the envelope plus `extra`: nothing for the feed, `timestamp` for webhook bodies.
 */
function eventsOf<Extra extends z.ZodRawShape>(party: 'workspace' | 'publisher', extra: Extra) {
  const member = <T extends z.ZodType, D extends z.ZodType>(type: T, data: D) => z.object({ ...envelope, ...extra, type, data });
  const order = party === 'workspace' ? buyerOrder : publisherOrder;
  const orderEvent = member(z.enum(orderEventTypes), order.describe('The order as GET …/orders/{id} showed it to this party right after the change.'));
  const messageEvent = member(z.literal('order.message_received'), messageEventData);
  const disabledEvent = member(z.literal('webhook_endpoint.disabled'), webhookEndpoint);
  return party === 'workspace'
    ? z.discriminatedUnion('type', [
        orderEvent,
        messageEvent,
        member(z.literal('workspace.topped_up'), topUpData),
        member(z.literal('balance.topped_up'), balanceToppedUpData),
        member(z.literal('balance.adjusted'), balanceAdjustedData),
        member(z.literal('key.budget_exhausted'), budgetExhaustedData),
        disabledEvent,
        member(z.enum(approvalEventTypes), approvalRequest.describe('The approval request as GET /api/v1/approval-requests/{id} showed it right after the change.')),
      ])
    : z.discriminatedUnion('type', [orderEvent, messageEvent, member(z.enum(['payout.requested', 'payout.sent', 'payout.failed']), payoutEventData), disabledEvent]);
}

export const workspaceEvent = eventsOf('workspace', {}).meta({
  id: 'Event',
  description: 'Something that happened to the workspace: `data` is the object it concerns, as this API shows it to the workspace.',
});

export const publisherEvent = eventsOf('publisher', {}).meta({
  id: 'PublisherEvent',
  description: 'Something that happened to the publisher: `data` is the object it concerns, as the publisher API shows it.',
});

// Webhook bodies: the feed's event with `timestamp`, as the Standard Webhooks spec names the
// event's time. Workspace and publisher endpoints get different views of an order, so each has its
// own body schema (the document's webhooks `event` and `publisherEvent`).
const webhookTimestamp = { timestamp: z.string().describe('The same as created_at (the Standard Webhooks name).') };

export const workspaceWebhookBody = eventsOf('workspace', webhookTimestamp).meta({
  id: 'WebhookEvent',
  description: "The body POSTed to a workspace's webhook endpoints: the event as GET /api/v1/events shows it, with timestamp.",
});

export const publisherWebhookBody = eventsOf('publisher', webhookTimestamp).meta({
  id: 'PublisherWebhookEvent',
  description: "The body POSTed to a publisher's webhook endpoints: the event as GET /api/v1/publisher/events shows it, with timestamp.",
});

/**
 * An integer query parameter that stays undefined when not given (its default depends on the mode).
 * Up to 16 digits, the length of the largest bound (2^53 − 1); the bound itself is checked on the
 * number, which is exact that far.
 */
function optionalInt(min: number, max: number, what: string) {
  const parsed = z
    .string()
    .regex(/^\d{1,16}$/, `${what} must be an integer between ${min} and ${max}`)
    .transform(Number)
    .refine((n) => n >= min && n <= max, `${what} must be an integer between ${min} and ${max}`)
    .optional();
  return documentAs(parsed, { type: 'integer', minimum: min, maximum: max });
}

export const EVENT_PAGE_DEFAULTS = { page: 1, per_page: 15, limit: 100 };

export const eventQuery = z.strictObject({
  type: z.enum(eventTypes).optional().describe('Only events of this type.'),
  order_id: optionalInt(1, Number.MAX_SAFE_INTEGER, 'order_id').describe("Only events about this order, one of the caller's own (any other id is a 404)."),
  after: z
    .string()
    .max(40)
    .optional()
    .describe('Follower mode: the events after this event id, oldest first (no page links). Start with evt_0000000000000000.'),
  limit: optionalInt(1, 100, 'limit').describe('Follower mode only: at most this many events, 1..100 (default 100).'),
  page: optionalInt(1, 1_000_000, 'page').describe('Page mode only: 1-based page number, 1..1000000 (default 1).'),
  per_page: optionalInt(1, 100, 'per_page').describe('Page mode only: items per page, 1..100 (default 15).'),
});

export function followPage<T extends z.ZodType>(event: T) {
  return z.object({
    data: z.array(event).describe('Oldest first; the last id is the next `after`.'),
    has_more: z.boolean().describe('More events are already waiting: ask again at once with the last id.'),
  });
}

export const webhookEndpointBody = z.strictObject({
  url: z.string().trim().min(1, 'is required').max(2000).describe('https URL that receives the events (POST, Standard Webhooks signatures).'),
  events: z
    .array(z.enum(eventTypes))
    .min(1, 'must name at least one event type (leave it out for every type)')
    .max(eventTypes.length)
    .refine((t) => new Set(t).size === t.length, 'must not repeat a type')
    .optional()
    .describe('Event types to send; left out: every type, those added later too.'),
});

export const webhookDelivery = z
  .object({
    id: z.number().int(),
    event_id: z.string().describe('Also the webhook-id header of every attempt.'),
    event_type: z.enum(eventTypes),
    status: z.enum(['pending', 'delivered', 'failed']).describe('failed: given up when the endpoint was disabled.'),
    attempts: z.number().int(),
    response_status_code: z.number().int().nullable().describe('Of the last attempt; null when no reply arrived.'),
    duration_ms: z.number().int().nullable().describe('Of the last attempt.'),
    error: z.string().nullable().describe('Why the last attempt failed: the status answered, a timeout, a refused address.'),
    next_attempt_at: z.string().nullable().describe('When a pending delivery is attempted (again).'),
    first_attempt_at: z.string().nullable(),
    last_attempt_at: z.string().nullable(),
    delivered_at: z.string().nullable(),
    created_at: z.string(),
  })
  .meta({ id: 'WebhookDelivery', description: 'One event sent to one endpoint, retried until a 2xx or until the endpoint is disabled.' });
