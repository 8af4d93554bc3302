import { z } from 'zod';
import { approvalReasons, type ApprovalReason } from '../common/enums.js';
import { formatCents } from '../domain/money/format.js';
import type { PlaceOrdersInput } from '../domain/orders/placement-rules.js';
import { quoteApproval as approvalQuote, quotePlacement as placementQuote, type QuoteMoney } from '../domain/orders/quote.js';
import { contentByValues, offerFormat } from '../domain/outlets/enums.js';
import { keyBudget } from '../schemas/me.js';
import type { ToolContext } from './tool.js';

/**
 * What a spending tool's first step shows: the domain's quote (src/domain/orders/quote.ts) written
 * as the tools answer it: what would be bought or paid, the total, and the available balance
 * before and after. A quote is a preview: the binding checks run again in the confirming
 * transaction (place / approvePlacement), which also refuses a total that differs from the quoted
 * one (quote_changed).
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

/** The quote's money as the tools write it (`paid_from`: the available balance, or what was held). */
function totals(q: QuoteMoney) {
  return {
    total_cents: q.total.cents,
    total_cents_formatted: q.total.formatted,
    paid_from: q.movement === 'hold' ? ('available' as const) : ('held' as const),
    balance: q.balance.cents,
    balance_formatted: q.balance.formatted,
    balance_after: q.balanceAfter.cents,
    balance_after_formatted: q.balanceAfter.formatted,
    shortfall_cents: q.shortfall.cents,
    shortfall_cents_formatted: q.shortfall.formatted,
  };
}

export async function moneyOf(ctx: ToolContext): Promise<Money> {
  const w = await ctx.workspaces.settings.get(ctx.principal.workspaceId);
  return (c) => formatCents(c, w.currency, w.perUsd);
}

const quoteDeps = (ctx: ToolContext) => ({ db: ctx.pool, workspaces: ctx.workspaces });

/** The price of placing these orders now (the domain's quote); refuses exactly what placement would refuse outright. */
export async function quotePlacement(ctx: ToolContext, input: PlaceOrdersInput) {
  const q = await placementQuote(quoteDeps(ctx), ctx.principal, input, ctx.clock.now());
  const items = q.items.map(({ offer: f, price }) => ({
    offer_id: f.id,
    outlet: { id: f.outlet_id, name: f.outlet_name, domain: f.outlet_domain },
    format: f.format,
    title: f.title,
    content_by: f.content_by,
    turnaround_days: f.turnaround_days,
    price: price.cents,
    price_formatted: price.formatted,
  }));
  return { items, ...totals(q), budget: q.budget, approval: approvalOf(q.asks) };
}

/** Approving a live placement pays the publisher from escrow: the available balance is unchanged. */
export async function quoteApproval(ctx: ToolContext, orderId: number) {
  const q = await approvalQuote(quoteDeps(ctx), ctx.principal, orderId, ctx.clock.now());
  const { order } = q;
  const item = {
    order_id: order.id,
    outlet: order.outlet,
    offer: order.offer,
    live_url: order.live_url,
    price: order.price,
    price_formatted: order.price_formatted,
  };
  // Shown, never refused by: approving releases money already held.
  return { items: [item], ...totals(q), budget: q.budget, approval: approvalOf(q.asks) };
}
