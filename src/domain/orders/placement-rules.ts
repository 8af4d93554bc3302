import type { ApprovalReason } from '../../common/enums.js';
import { DomainError, invalidInput, notFound } from '../errors.js';
import { formatCents } from '../money/format.js';
import { requireSpend } from '../users/permissions.js';
import { notOwnProject } from '../workspaces/projects.js';
import { type BuyerActor, isMember } from './buyer-actor.js';
import { analyseContentFor, type ContentAnalysis, type ContentCheck, checkContent } from './content-checks.js';
import type { PlacementContext, PlacementOfferRow } from './placement-statements.js';
import { type Durations, initialDeadline, initialStatus, type InitialStatus } from './states.js';

// The placement's rules, as pure functions of what the context read gave: who may place, which
// offers, the project, the quoted total, the workspace's limits, the balance, and what each new
// order starts as. Nothing here reads or writes; placement-transaction.ts calls these in order.

/** One placement request buys at most this many offers; a plan picks at most as many, so its offer_ids go as they are. */
export const MAX_OFFERS_PER_REQUEST = 50;

export interface PlaceOrdersInput {
  offer_ids: number[];
  target_url: string;
  anchor_text?: string | undefined;
  brief?: string | undefined;
  content?: string | undefined;
  content_title?: string | undefined;
  project_id?: number | undefined;
}

/**
 * A key's spending action that passed every check and must now wait for a person: thrown instead
 * of acting, never kept (the approvals area turns it into an approval request, kept in its stead).
 * Carries what the request shows: for a placement the offers as checked, for an approval of a
 * live placement the order; and the total. Why it must wait (docs/approvals.md): the key needs
 * approval for every spending action, or the total is above the workspace's `approval_above_cents`.
 */
export class ApprovalNeeded extends DomainError {
  constructor(
    readonly reason: ApprovalReason,
    readonly total: number,
    readonly offers: PlacementOfferRow[],
    readonly orderId: number | null = null,
  ) {
    super('approval_required', "This order needs a person's approval.", { total_cents: total });
    this.name = 'ApprovalNeeded';
  }
}

/** A person approved the placement: it runs for the key that asked, its budget counting but never refusing it. */
export interface ApprovedBy {
  requestId: number;
}

/** The buyer's content and what the checks read from it, computed once, outside any lock. */
export function contentOf(input: PlaceOrdersInput) {
  if (input.content === undefined) return undefined;
  const content = { title: input.content_title!, body: input.content };
  return { ...content, analysis: analyseContentFor(content, input.target_url) };
}

export type PlacementContent = ReturnType<typeof contentOf>;

/**
 * Who places must still be allowed to, as read in the placing transaction: a key not revoked
 * that can place orders, or a person whose role in the workspace may spend (the role table's
 * `spend`, as approving a placement asks), so a role lowered a moment ago places nothing.
 */
function requirePlacer(ctx: PlacementContext | undefined, principal: BuyerActor): asserts ctx is PlacementContext {
  if (!isMember(principal)) {
    if (!ctx?.key_ok) throw new DomainError('unauthenticated', 'This key has been revoked or has expired.');
    return;
  }
  if (!ctx?.member_role) throw notFound('Workspace');
  requireSpend(ctx.member_role, 'place');
}

/**
 * The placement rules, in the order a refusal names them; the balance is compared by the caller.
 * `asks` says why a person must approve it first (a key's placement only: a person placing in
 * the console is that person), unless one already has (`approved`).
 */
export function judge(ctx: PlacementContext | undefined, principal: BuyerActor, input: PlaceOrdersInput, quotedTotalCents: number | undefined, approved: ApprovedBy | undefined) {
  requirePlacer(ctx, principal);
  const byId = new Map(ctx.offers.map((f) => [f.id, f]));
  const unknown = input.offer_ids.filter((id) => !byId.get(id)?.active);
  if (unknown.length) throw invalidInput({ offer_ids: [`unknown or inactive offers: ${unknown.join(', ')}`] });
  if (!ctx.project_ok) throw notOwnProject();
  const offers = input.offer_ids.map((id) => byId.get(id)!);
  const total = offers.reduce((s, f) => s + f.price, 0);
  const fmt = (c: number) => formatCents(c, ctx.currency, ctx.per_usd);
  // A changed total is said first: a refusal over a total the user never saw would have them
  // raise a limit or top up before they see the new price.
  if (quotedTotalCents !== undefined && total !== quotedTotalCents) throw quoteChanged(quotedTotalCents, total, fmt);
  if (ctx.max_order_cents !== null && total > ctx.max_order_cents) {
    throw new DomainError(
      'approval_required',
      `This order totals ${fmt(total)}, above the workspace's approval limit of ${fmt(ctx.max_order_cents)}. Ask an owner to raise the limit or order less.`,
      { total_cents: total, max_order_cents: ctx.max_order_cents },
    );
  }
  let asks: ApprovalReason | undefined;
  if (!isMember(principal) && !approved) {
    if (ctx.needs_approval) asks = 'key_needs_approval';
    else if (ctx.approval_above_cents !== null && total > ctx.approval_above_cents) asks = 'above_approval_limit';
  }
  return { ctx, offers, total, fmt, asks };
}

export function insufficientBalance(needed: number, balance: number, fmt: (c: number) => string): DomainError {
  return new DomainError('insufficient_balance', `The balance is too low: ${fmt(needed)} more is needed.`, {
    needed_cents: needed,
    needed_formatted: fmt(needed),
    balance,
    balance_formatted: fmt(balance),
  });
}

/** The total changed since the quote the user confirmed: nothing is spent. */
export function quoteChanged(quotedCents: number, totalCents: number, fmt: (cents: number) => string): DomainError {
  return new DomainError(
    'quote_changed',
    `The total changed since the quote (quoted ${fmt(quotedCents)}, now ${fmt(totalCents)}). Nothing was spent. Get a new quote and confirm it with the user again.`,
    { quoted_total_cents: quotedCents, total_cents: totalCents },
  );
}

/** An order a placement will make: its offer, the state it starts in, its deadline, its content's checks. */
export interface NewOrder {
  offer: PlacementOfferRow;
  status: InitialStatus;
  deadline: Date;
  checks: ContentCheck[] | null;
}

/** The order a placement makes of one offer, placed at `now`. */
export function newOrder(offer: PlacementOfferRow, input: PlaceOrdersInput, content: PlacementContent, now: number, durations: Durations): NewOrder {
  const status = initialStatus(offer.content_by, content !== undefined);
  return { offer, status, deadline: initialDeadline(status, now, durations), checks: content ? checksFor(content, input, offer) : null };
}

function checksFor(content: { title: string; body: string; analysis: ContentAnalysis }, input: PlaceOrdersInput, offer: PlacementOfferRow) {
  const limits = {
    targetUrl: input.target_url,
    anchorText: input.anchor_text ?? null,
    minWords: offer.min_words,
    maxWords: offer.max_words,
    maxLinks: offer.max_links,
  };
  return checkContent(content, limits, content.analysis);
}
