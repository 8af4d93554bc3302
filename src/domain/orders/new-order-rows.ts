import { type BuyerActor, isMember } from './buyer-actor.js';
import type { OrderRow } from './order-view.js';
import type { ApprovedBy, NewOrder, PlaceOrdersInput } from './placement-rules.js';
import { keyIdOf, type OrderRecord, type PlacementContext } from './placement-statements.js';

// A new order twice over, from what the placement knows before it writes: as the write statement
// takes it (`orderRecord`) and as a read of it would give it back (`newOrderRow`), so the answer
// and both parties' `order.placed` events need no read under the lock.

/** A new order as `writeOrders` takes it. */
export function orderRecord(principal: BuyerActor, input: PlaceOrdersInput, approved: ApprovedBy | undefined, order: NewOrder, id: number): OrderRecord {
  const { offer, status, deadline } = order;
  return {
    id,
    workspace_id: principal.workspaceId,
    project_id: input.project_id ?? null,
    placed_by_key_id: keyIdOf(principal),
    placed_by_user_id: isMember(principal) ? principal.userId : null,
    approval_request_id: approved?.requestId ?? null,
    target_url: input.target_url,
    anchor_text: input.anchor_text ?? null,
    brief: input.brief ?? null,
    outlet_id: offer.outlet_id,
    offer_id: offer.id,
    publisher_id: offer.publisher_id,
    status,
    publisher_price_cents: offer.publisher_price_cents,
    fee_cents: offer.fee_cents,
    price: offer.price,
    content_by: offer.content_by,
    turnaround_days: offer.turnaround_days,
    min_words: offer.min_words,
    max_words: offer.max_words,
    max_links: offer.max_links,
    link_type: offer.link_type,
    sponsored_label: offer.sponsored_label,
    deadline_at: deadline,
  };
}

/** A new order's row as a read of it would give it, built from what was written. */
export function newOrderRow(
  input: PlaceOrdersInput,
  ctx: PlacementContext,
  o: NewOrder,
  id: number,
  now: number,
  content: { title: string; body: string } | undefined,
): OrderRow & { publisher_id: number } {
  const at = new Date(now);
  const f = o.offer;
  return {
    id,
    publisher_id: f.publisher_id,
    status: o.status,
    project_id: input.project_id ?? null,
    price: f.price,
    publisher_price_cents: f.publisher_price_cents,
    target_url: input.target_url,
    anchor_text: input.anchor_text ?? null,
    brief: input.brief ?? null,
    live_url: null,
    live_checks: null,
    live_checked_at: null,
    guarantee_ends_at: null,
    decline_reason: null,
    deadline_at: o.deadline,
    created_at: at,
    updated_at: at,
    outlet_id: f.outlet_id,
    outlet_name: f.outlet_name,
    outlet_domain: f.outlet_domain,
    offer_id: f.id,
    format: f.format,
    offer_title: f.title,
    version: content ? 1 : null,
    content_title: content?.title ?? null,
    content_body: content?.body ?? null,
    submitted_by: content ? 'buyer' : null,
    submitted_at: content ? at : null,
    checks: o.checks,
    messages_count: 0,
    currency: ctx.currency,
    per_usd: ctx.per_usd,
  };
}
