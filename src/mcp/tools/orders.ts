import { z } from 'zod';
import { type Kept, type OnceOptions, valueOf } from '../../domain/idempotency/record-once.js';
import { buyerOrders } from '../../domain/orders/buyer-actions.js';
import type { BuyerOrderView, MessageView } from '../../domain/orders/order-view.js';
import { getOrder as readOrder, listOrders as readOrders } from '../../domain/orders/order-read.js';
import { orderStatuses } from '../../domain/orders/states.js';
import { buyerOrder, contentBody, messageBody, messageSchema } from '../../schemas/orders.js';
import { annotations, defineTool, idArg, pageArgs, pageMeta, pageMetaSchema, type ToolContext } from '../tool.js';

export const orderId = idArg('The order id, from place-orders or list-orders.');
const buyer = (ctx: ToolContext) => ({ party: 'buyer' as const, workspaceId: ctx.principal.workspaceId });
const one = z.object({ order: buyerOrder });

/** These tools keep no record: each call is the action once, answered as its result. */
const unkept: OnceOptions = { once: undefined };
const resultOf = async <T>(kept: Promise<Kept<T>>): Promise<T> => valueOf(await kept);

export const listOrders = defineTool({
  name: 'list-orders',
  title: 'List orders',
  description:
    "The workspace's orders, newest first, each with its status, whose turn it is (your_turn: true means the buyer must act), the current " +
    'deadline, price (US cents, fees included), live_url once published and the latest content with its checks. Free. Use ' +
    'your_turn=true to find what needs the user: awaiting_content → submit-content, draft_review → approve-draft or send-message, ' +
    'live_review → approve-placement.',
  input: z.strictObject({
    status: z.enum(orderStatuses).optional().describe(`Only orders in this status: ${orderStatuses.join(', ')}.`),
    your_turn: z.boolean({ error: 'must be true or false' }).optional().describe('Only orders waiting on the buyer (true) or on the publisher / finished (false).'),
    ...pageArgs,
  }),
  output: z.object({ items: z.array(buyerOrder), meta: pageMetaSchema }),
  annotations: annotations.read,
  run: async (ctx, { status, your_turn, page, per_page }) => {
    const filters = { ...(status ? { status } : {}), ...(your_turn !== undefined ? { yourTurn: your_turn } : {}) };
    const { items, total } = await readOrders(ctx.pool, buyer(ctx), filters, page, per_page);
    return { items, meta: pageMeta(page, per_page, total, items.length) };
  },
});

export const getOrder = defineTool({
  name: 'get-order',
  title: 'Get an order',
  description:
    'One order: status, whose turn it is, deadlines, price (US cents), live_url once published, the latest content with its checks ' +
    '(target_link, anchor_text, word_count, link_count, title_length, markdown_safe: pass|warn|fail) and the last 100 messages. Free. ' +
    'The status says what can happen next (see list-orders).',
  input: z.strictObject({ order_id: orderId }),
  output: one,
  annotations: annotations.read,
  run: async (ctx, { order_id }) => ({ order: await readOrder(ctx.pool, buyer(ctx), order_id) }),
});

export const submitContent = defineTool({
  name: 'submit-content',
  title: 'Submit content for an order',
  description:
    'Supplies the article of an order waiting for it (status awaiting_content): a title and a Markdown body containing a link to the ' +
    "order's target_url (with its anchor_text). The order goes to the publisher (awaiting_acceptance); the returned content carries " +
    'its checks, which are shown but block nothing. Costs nothing (the order was paid at placement). Any other status: conflict. ' +
    'Next: the publisher accepts and publishes it; follow with get-order or list-orders (your_turn), and approve-placement once it ' +
    'is live (live_review).',
  input: z.strictObject({
    order_id: orderId,
    title: contentBody.shape.title.describe('The article title (1–300 characters; 10–120 passes the title_length check).'),
    body: contentBody.shape.body.describe("The article in Markdown, with a link to the order's target_url."),
  }),
  output: one,
  annotations: annotations.step,
  run: async (ctx, { order_id, title, body }) => ({
    order: await resultOf(buyerOrders.submitContent(ctx, ctx.principal, order_id, { title, body }, unkept)),
  }),
});

export const approveDraft = defineTool({
  name: 'approve-draft',
  title: "Approve the publisher's draft",
  description:
    "Approves the publisher's draft of an order in draft_review, after the user has read it (get-order shows it with its checks); the " +
    'publisher then publishes it (publishing). Costs nothing: payment happens only at approve-placement. To ask for changes instead, ' +
    'use send-message. Any other status: conflict.',
  input: z.strictObject({ order_id: orderId }),
  output: one,
  annotations: annotations.step,
  run: async (ctx, { order_id }) => ({ order: await resultOf(buyerOrders.approveDraft(ctx, ctx.principal, order_id, unkept)) }),
});

export const sendMessage = defineTool({
  name: 'send-message',
  title: 'Send a message to the publisher',
  description:
    "Sends a message to the order's publisher, e.g. to ask for changes to a draft in draft_review or to answer a question. Costs " +
    'nothing and changes no status. Each call adds a message. The conversation is in get-order (messages).',
  input: z.strictObject({
    order_id: orderId,
    body: messageBody.shape.body.describe('The message, 1–5000 characters.'),
  }),
  output: z.object({ message: messageSchema }),
  annotations: annotations.append,
  run: async (ctx, { order_id, body }) => ({
    message: await resultOf(buyerOrders.message(ctx, ctx.principal, order_id, body, unkept)),
  }),
});

export const cancelOrder = defineTool({
  name: 'cancel-order',
  title: 'Cancel an order',
  description:
    'Cancels an order the publisher has not accepted yet (awaiting_content or awaiting_acceptance): its price goes back from escrow to ' +
    'the available balance and the order ends (cancelled). Cannot be undone; confirm with the user first. Any later status: conflict. ' +
    'Next: get-balance shows the refund; search-outlets or plan-campaign to buy elsewhere.',
  input: z.strictObject({ order_id: orderId }),
  output: one,
  annotations: annotations.destructive,
  run: async (ctx, { order_id }) => ({ order: await resultOf(buyerOrders.cancel(ctx, ctx.principal, order_id, unkept)) }),
});
