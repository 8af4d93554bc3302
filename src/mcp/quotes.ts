import { z } from 'zod';
import { approvalReasons, type ApprovalReason } from '../common/enums.js';
import { conflict } from '../domain/errors.js';
import { budgetAfter } from '../domain/keys/budget.js';
import { formatCents } from '../domain/money/format.js';
import { placementApprovalAsks } from '../domain/orders/buyer-actions.js';
import { getOrder } from '../domain/orders/order-read.js';
import { checkPlacement, type PlaceOrdersInput } from '../domain/orders/place-orders.js';
import { contentByValues, offerFormat } from '../domain/outlets/enums.js';
import { keyBudget } from '../schemas/me.js';
import type { ToolContext } from './tool.js';

/**
 * What a spending tool's first step shows: what would be bought or paid, the total, and the
 * available balance before and after. A quote is a preview: the binding checks run again in the
 * confirming transaction (place / approvePlacement), which also refuses a total that differs
 * from the quoted one (quote_changed).
 */

const cents = (what: string) => z.number().int().describe(`${what}, in US cents (fees included).`);
const outletRef = z.object({ id: z.number().int(), name: z.string(), domain: z.string() });

export const placementItem = z.object({
  offer_id: z.number().int(),
  outlet: outletRef,
  format: offerFormat,
  title: z.string().describe("The offer's title."),
  content_by: z.enum(contentByValues).describe('buyer: the user must supply the article (content/content_title, or submit-content later).'),
  turnaround_days: z.number().int(),
  price: cents('The price of this order'),
  price_formatted: z.string(),
});

export const approvalItem = z.object({
  order_id: z.number().int(),
  outlet: outletRef,
  offer: z.object({ id: z.number().int(), format: offerFormat, title: z.string() }),
  live_url: z.string().nullable().describe('Where the placement is live: the user should check it before approving.'),
  price: cents('What the order cost; approving pays it from escrow to the publisher'),
  price_formatted: z.string(),
});

const approval = z
  .object({
    required: z
      .boolean()
      .describe(
        'true: confirming spends nothing yet; it makes an approval request that a person must approve in the console (the result is stage approval_pending with approve_url).',
      ),
    reason: z
      .enum(approvalReasons)
      .nullable()
      .describe(
        "key_needs_approval: this key's owner wants a person to approve each of its spending actions; above_approval_limit: the total is above the workspace's " +
          'approval_above_cents; null when no approval is needed.',
      ),
  })
  .describe('Whether a person must approve this before anything is spent, as things stand now (confirming checks again).');

/** A quote's `approval`, from the domain's reason a person must approve (undefined: none). */
const approvalOf = (asks: ApprovalReason | undefined): z.infer<typeof approval> => ({ required: asks !== undefined, reason: asks ?? null });

export function quoteSchema<T extends z.ZodType>(item: T) {
  return z.object({
    items: z.array(item),
    total_cents: cents('What confirming spends'),
    total_cents_formatted: z.string(),
    paid_from: z
      .enum(['available', 'held'])
      .describe('available: the total leaves the available balance; held: it was already held in escrow at placement, so the available balance does not change.'),
    balance: cents('The available balance now'),
    balance_formatted: z.string(),
    balance_after: cents('The available balance after confirming: balance − total_cents for paid_from available, never below 0 (with a shortfall, once it is topped up)'),
    balance_after_formatted: z.string(),
    shortfall_cents: cents('How much more the balance needs before confirming can succeed; 0 when it is enough'),
    shortfall_cents_formatted: z.string(),
    budget: keyBudget
      .nullable()
      .describe("The key's budget as it would be after confirming (for an approval: as it is; approving is never refused by it); null when the key has no limits or expiry."),
    approval,
  });
}

type Money = (c: number) => string;

function totals(total: number, balance: number, paidFrom: 'available' | 'held', fmt: Money) {
  const spent = paidFrom === 'available' ? total : 0;
  const shortfall = Math.max(0, spent - balance);
  const after = Math.max(0, balance - spent);
  return {
    total_cents: total,
    total_cents_formatted: fmt(total),
    paid_from: paidFrom,
    balance,
    balance_formatted: fmt(balance),
    balance_after: after,
    balance_after_formatted: fmt(after),
    shortfall_cents: shortfall,
    shortfall_cents_formatted: fmt(shortfall),
  };
}

export async function moneyOf(ctx: ToolContext): Promise<Money> {
  const w = await ctx.workspaces.settings.get(ctx.principal.workspaceId);
  return (c) => formatCents(c, w.currency, w.perUsd);
}

/** The price of placing these orders now; refuses exactly what placement would refuse outright. */
export async function quotePlacement(ctx: ToolContext, input: PlaceOrdersInput) {
  const now = ctx.clock.now();
  const [checked, me] = await Promise.all([checkPlacement(ctx.pool, ctx.principal, input, now), ctx.workspaces.me(ctx.principal, now)]);
  const { offers, total, fmt, asks } = checked;
  // Refused here as placement would refuse it (no token); else the budget left after the order.
  const budget = me.key.budget && ctx.principal.budget ? budgetAfter(ctx.principal.budget.limits, me.key.budget, total, now, fmt) : null;
  const items = offers.map((f) => ({
    offer_id: f.id,
    outlet: { id: f.outlet_id, name: f.outlet_name, domain: f.outlet_domain },
    format: f.format,
    title: f.title,
    content_by: f.content_by,
    turnaround_days: f.turnaround_days,
    price: f.price,
    price_formatted: fmt(f.price),
  }));
  return { items, ...totals(total, me.balance, 'available', fmt), budget, approval: approvalOf(asks) };
}

/** Approving a live placement pays the publisher from escrow: the available balance is unchanged. */
export async function quoteApproval(ctx: ToolContext, orderId: number) {
  const [order, me, asks] = await Promise.all([
    getOrder(ctx.pool, { party: 'buyer', workspaceId: ctx.principal.workspaceId }, orderId),
    ctx.workspaces.me(ctx.principal, ctx.clock.now()),
    placementApprovalAsks(ctx.pool, ctx.principal),
  ]);
  const fmt = await moneyOf(ctx); // cached by getMe
  if (order.status !== 'live_review') {
    throw conflict(`Cannot approve the placement: the order is ${order.status.replace(/_/g, ' ')}.`, order.status);
  }
  const item = {
    order_id: order.id,
    outlet: order.outlet,
    offer: order.offer,
    live_url: order.live_url,
    price: order.price,
    price_formatted: order.price_formatted,
  };
  // Shown, never refused by: approving releases money already held.
  return { items: [item], ...totals(order.price, me.balance, 'held', fmt), budget: me.key.budget, approval: approvalOf(asks) };
}
