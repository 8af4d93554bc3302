import { z } from 'zod';
import { isoSeconds } from '../../common/iso-seconds.js';
import { type ApprovalDeps, type Asked, approveConfirmedOrAsk, isAsked, placeOrAsk } from '../../domain/approvals/ask.js';
import { valueOf } from '../../domain/idempotency/record-once.js';
import type { BuyerOrderView } from '../../domain/orders/order-view.js';
import { approvalRequest } from '../../schemas/approvals.js';
import { buyerOrder, placeOrdersBody } from '../../schemas/orders.js';
import { confirmationOf } from '../confirmation.js';
import { approvalItem, moneyOf, placementItem, quoteApproval, quotePlacement, quoteSchema } from '../quotes.js';
import { annotations, defineTool, type ToolContext } from '../tool.js';
import { orderId } from './orders.js';

// Two-step spending (docs/mcp.md): without confirmation_token a spending tool quotes and
// spends nothing; with the token of that quote and the same arguments it acts, once.

const confirmationToken = z
  .string({ error: 'must be the confirmation_token string of a quote' })
  .min(1)
  .max(1000)
  .optional()
  .describe(
    'Leave out to get a quote (nothing is spent). After the user has explicitly confirmed that quote, send its confirmation_token with ' +
      'exactly the same other arguments to act. Valid for 10 minutes, for this key and these arguments only.',
  );

const stage = z
  .enum(['quote', 'done', 'approval_pending'])
  .describe(
    'quote: nothing was spent, show `quote` to the user and ask for confirmation; done: the action happened (or, with replayed, had already happened); ' +
      'approval_pending: confirmed, but nothing was spent: a person must approve it in the console first (show approve_url; check back with get-approval-request).',
  );
const quoteFields = (item: z.ZodType) => ({
  stage,
  quote: quoteSchema(item).optional().describe('stage quote only.'),
  confirmation_token: z.string().optional().describe('stage quote only: pass it back, with the same arguments, once the user has confirmed.'),
  expires_at: z.string().optional().describe('stage quote only: when the token stops being accepted (ISO 8601 UTC).'),
  next_step: z.string().optional().describe('stages quote and approval_pending: what to do next.'),
  replayed: z
    .boolean()
    .optional()
    .describe(
      'stages done and approval_pending: true when this token had already been confirmed and this is the stored result; nothing was spent or asked again.',
    ),
  status: z.literal('approval_pending').optional().describe('stage approval_pending only: a person must approve before anything happens.'),
  approval_request: approvalRequest
    .optional()
    .describe('stage approval_pending only: the request that waits for a person, as it was when made; get-approval-request reads it as it is now.'),
  approve_url: z
    .string()
    .optional()
    .describe("stage approval_pending only: the console's page where a person approves or declines it (the request's approve_url): show it to the user."),
});

/** What the approvals need from the tools' context. */
const approvalsOf = (ctx: ToolContext): ApprovalDeps => ({ pool: ctx.pool, clock: ctx.clock, durations: ctx.durations, baseUrl: ctx.approvalBaseUrl });

/**
 * A confirmed call that waits for a person: a normal result, not an error, since nothing went
 * wrong; the agent's part is to hand the link to the user and check back later.
 */
function approvalPending(asked: Asked, tool: string, replayed: boolean) {
  const request = asked.approval_request;
  return {
    stage: 'approval_pending' as const,
    status: 'approval_pending' as const,
    approval_request: request,
    approve_url: request.approve_url,
    next_step:
      `Nothing has been spent: a person who may spend the workspace's money must approve this in the console first, before ${request.expires_at}. ` +
      `Show the user approve_url (${request.approve_url}) and ask them to approve it there. Do not call ${tool} again to retry: the request is already waiting. ` +
      `Check back later with get-approval-request (approval_request_id ${request.id}): once approved, its order_ids name the orders (get-order); ` +
      'declined, expired or failed, nothing was spent.',
    replayed,
  };
}

function issueQuote<Q extends { total_cents: number; shortfall_cents: number; shortfall_cents_formatted: string; approval: { required: boolean } }>(
  ctx: ToolContext,
  tool: string,
  args: Record<string, unknown>,
  quote: Q,
  subject?: string | null,
) {
  const { token, expiresAt } = ctx.confirmations.mint(ctx.principal.keyId, tool, args, quote.total_cents, subject);
  const short =
    quote.shortfall_cents > 0
      ? ` The balance is ${quote.shortfall_cents_formatted} short: confirming fails with insufficient_balance until the workspace is topped up.`
      : '';
  const approval = quote.approval.required
    ? ' After confirming, a person must approve it in the console before anything is spent; you will get a link (approve_url) to show the user.'
    : '';
  return {
    stage: 'quote' as const,
    quote,
    confirmation_token: token,
    expires_at: isoSeconds(expiresAt),
    next_step:
      `Nothing has been spent. Show the user this quote (items, total_cents_formatted, balance_after_formatted) and ask for explicit confirmation. ` +
      `Only after they agree, call ${tool} again with exactly the same arguments plus confirmation_token, before expires_at.${short}${approval}`,
  };
}

const placeOrdersInput = placeOrdersBody
  .safeExtend({
    offer_ids: placeOrdersBody.shape.offer_ids.describe('Offers to buy, one order each: offer ids from get-outlet, or a plan’s offer_ids.'),
    confirmation_token: confirmationToken,
  })
  .strict();

export const placeOrders = defineTool({
  name: 'place-orders',
  title: 'Place orders (quote, then confirm)',
  description:
    'Buys offers: one order per offer, all or nothing; the total (US cents, fees included) moves from the available balance into ' +
    'escrow until each placement is approved, and returns on decline, expiry or cancellation. Two steps: (1) call WITHOUT ' +
    'confirmation_token — nothing is spent; you get a quote (items, total, balance after, shortfall, the key\'s budget left after the order) and a confirmation_token; ' +
    'an order over the key\'s budget (per order, UTC day or month) is refused with budget_exceeded and no token. (2) Show ' +
    'the quote to the user and get their explicit confirmation; only then call again with the same arguments plus confirmation_token. ' +
    'Needs a key created with "Can place orders". Offers with content_by=buyer need content/content_title now or submit-content later. ' +
    "When a person must approve it first (the quote's approval.required: the key needs approval, or the total is above the workspace's " +
    'approval_above_cents), confirming spends nothing and answers stage approval_pending with approve_url: show that link to the user, do not ' +
    'retry, and check back with get-approval-request. Next: list-orders / get-order to follow the orders.',
  input: placeOrdersInput,
  output: z.object({ ...quoteFields(placementItem), orders: z.array(buyerOrder).optional().describe('stage done only: the orders created.') }),
  annotations: annotations.destructive,
  spending: true,
  run: async (ctx, args) => {
    const { confirmation_token, ...input } = args;
    if (confirmation_token === undefined) return issueQuote(ctx, 'place-orders', args, await quotePlacement(ctx, input));
    const { once, quotedTotalCents } = confirmationOf(ctx.confirmations, ctx.principal, 'place-orders', args, confirmation_token);
    const kept = await placeOrAsk(ctx.placementGroups, approvalsOf(ctx), ctx.principal, input, { once, quotedTotalCents });
    // A repeat of a confirmed call answers the first one's orders or request; `replayed` says it spent nothing.
    const value = valueOf(kept);
    if (isAsked(value)) return approvalPending(value, 'place-orders', kept.replayed);
    return { stage: 'done' as const, orders: value, replayed: kept.replayed };
  },
});

export const approvePlacement = defineTool({
  name: 'approve-placement',
  title: 'Approve a live placement and pay (quote, then confirm)',
  description:
    'Approves the live placement of an order in live_review and pays for it: its price, held in escrow since placement, goes to the ' +
    'publisher and the order is completed. The order\'s live_checks say whether the service found the link on the page as ordered; ' +
    'show them to the user. The payout stays refundable for the link guarantee (guarantee_ends_at): a link removed and not restored ' +
    'in time is refunded to the balance. Two steps: (1) call WITHOUT confirmation_token — nothing happens; you ' +
    'get a quote (the order, its live_url, the amount) and a confirmation_token. (2) Have the user check the live_url and confirm ' +
    'explicitly; only then call again with the same order_id plus confirmation_token. Needs a key created with "Can place orders". ' +
    "Other statuses: conflict. When the key needs a person's approval (the quote's approval.required), confirming pays nothing and " +
    'answers stage approval_pending with approve_url: show that link to the user, do not retry, and check back with get-approval-request. ' +
    'Next: get-ledger shows the release; list-orders (your_turn) for what else needs the user.',
  input: z.strictObject({ order_id: orderId, confirmation_token: confirmationToken }),
  output: z.object({ ...quoteFields(approvalItem), order: buyerOrder.optional().describe('stage done only: the order, now completed.') }),
  annotations: annotations.destructive,
  spending: true,
  run: async (ctx, args) => {
    const { order_id, confirmation_token } = args;
    if (confirmation_token === undefined) {
      const quote = await quoteApproval(ctx, order_id);
      // The token binds the page the user is asked to check, as well as the price.
      return issueQuote(ctx, 'approve-placement', args, quote, quote.items[0]!.live_url);
    }
    const fmt = await moneyOf(ctx);
    const { once, quotedTotalCents, quotedSubject } = confirmationOf(ctx.confirmations, ctx.principal, 'approve-placement', args, confirmation_token);
    const kept = await approveConfirmedOrAsk(approvalsOf(ctx), ctx.principal, order_id, { once, quotedTotalCents, quotedLiveUrl: quotedSubject, fmt });
    const value = valueOf<BuyerOrderView | Asked>(kept);
    if (isAsked(value)) return approvalPending(value, 'approve-placement', kept.replayed);
    return { stage: 'done' as const, order: value, replayed: kept.replayed };
  },
});
