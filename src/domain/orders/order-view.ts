import { isoSeconds } from '../../common/iso-seconds.js';
import { formatCents } from '../money/format.js';
import type { OfferFormat } from '../outlets/enums.js';
import type { ContentCheck } from './content-checks.js';
import type { LiveCheck } from '../placements/live-checks.js';
import { deadlineKindOf, type OrderStatus, type Party, turnOf } from './states.js';

export interface OrderRow {
  id: number;
  status: OrderStatus;
  project_id: number | null;
  price: number;
  publisher_price_cents: number;
  target_url: string;
  anchor_text: string | null;
  brief: string | null;
  live_url: string | null;
  decline_reason: string | null;
  deadline_at: Date | null;
  created_at: Date;
  updated_at: Date;
  outlet_id: number;
  outlet_name: string;
  outlet_domain: string;
  offer_id: number;
  format: OfferFormat;
  offer_title: string;
  version: number | null;
  content_title: string | null;
  content_body: string | null;
  submitted_by: Party | null;
  submitted_at: Date | null;
  checks: ContentCheck[] | null;
  live_checks: LiveCheck[] | null;
  live_checked_at: Date | null;
  guarantee_ends_at: Date | null;
  messages_count: number;
  currency: string;
  per_usd: number;
}

export interface MessageRow {
  id: number;
  body: string;
  author: Party;
  created_at: Date;
}

export const messageView = (m: MessageRow) => ({ id: m.id, body: m.body, author: m.author, created_at: isoSeconds(m.created_at)! });
export type MessageView = ReturnType<typeof messageView>;

/** An order as its buyer or its publisher sees it (docs/orders.md). */
export function orderView(r: OrderRow, viewer: 'buyer', messages?: MessageRow[]): BuyerOrderView;
export function orderView(r: OrderRow, viewer: 'publisher', messages?: MessageRow[]): PublisherOrderView;
export function orderView(r: OrderRow, viewer: Party, messages?: MessageRow[]): BuyerOrderView | PublisherOrderView;
export function orderView(r: OrderRow, viewer: Party, messages?: MessageRow[]) {
  // Keys are added to the one object `common` builds, not spread into a new one: in Node 20,
  // `{ ...view, more }` of an object this wide costs microseconds (V8 gives up its fast layout),
  // and every placement builds three views and writes each as JSON (bench/RESULTS.md).
  const view = common(r, viewer, messages);
  return viewer === 'buyer' ? Object.assign(view, { project_id: r.project_id }, buyerMoney(r)) : Object.assign(view, publisherMoney(r));
}

const buyerMoney = (r: Pick<OrderRow, 'price' | 'currency' | 'per_usd'>) => ({ price: r.price, price_formatted: formatCents(r.price, r.currency, r.per_usd) });
const publisherMoney = (r: Pick<OrderRow, 'publisher_price_cents'>) => ({
  payout_cents: r.publisher_price_cents,
  payout_formatted: formatCents(r.publisher_price_cents, 'USD', 1),
});

/** The columns an order table of the console reads: no brief or content, which may be long and which a table does not show. */
export type OrderSummaryRow = Pick<
  OrderRow,
  'id' | 'status' | 'price' | 'publisher_price_cents' | 'deadline_at' | 'updated_at' | 'outlet_id' | 'outlet_name' | 'outlet_domain' | 'currency' | 'per_usd'
>;

/** An order as a row of a list: whose turn, the outlet, what it costs the viewer (price or payout), the deadline that applies. */
export function orderSummary(r: OrderSummaryRow, viewer: Party) {
  const turn = turnOf[r.status];
  return {
    id: r.id,
    status: r.status,
    turn,
    your_turn: turn === viewer,
    outlet: { id: r.outlet_id, name: r.outlet_name, domain: r.outlet_domain },
    money_formatted: viewer === 'buyer' ? buyerMoney(r).price_formatted : publisherMoney(r).payout_formatted,
    deadline: deadlineKindOf[r.status] ? isoSeconds(r.deadline_at) : null,
    updated_at: isoSeconds(r.updated_at)!,
  };
}
export type OrderSummary = ReturnType<typeof orderSummary>;

export type BuyerOrderView = ReturnType<typeof common> & ReturnType<typeof buyerMoney> & { project_id: number | null };
export type PublisherOrderView = ReturnType<typeof common> & ReturnType<typeof publisherMoney>;

/** An order's messages, or their count where they are not listed. */
type Messages = { messages: MessageView[]; messages_count?: never } | { messages?: never; messages_count: number };

function common(r: OrderRow, viewer: Party, messages?: MessageRow[]) {
  const turn = turnOf[r.status];
  const kind = deadlineKindOf[r.status];
  const deadline = isoSeconds(r.deadline_at);
  const view = {
    id: r.id,
    status: r.status,
    turn,
    your_turn: turn === viewer,
    outlet: { id: r.outlet_id, name: r.outlet_name, domain: r.outlet_domain },
    offer: { id: r.offer_id, format: r.format, title: r.offer_title },
    target_url: r.target_url,
    anchor_text: r.anchor_text,
    brief: r.brief,
    deadlines: {
      respond_by: kind === 'respond_by' ? deadline : null,
      deliver_by: kind === 'deliver_by' ? deadline : null,
      review_by: kind === 'review_by' ? deadline : null,
      restore_by: kind === 'restore_by' ? deadline : null,
    },
    live_url: r.live_url,
    live_checks: r.live_checks ?? [],
    live_checked_at: isoSeconds(r.live_checked_at),
    guarantee_ends_at: isoSeconds(r.guarantee_ends_at),
    content:
      r.version === null
        ? null
        : {
            title: r.content_title!,
            body: r.content_body!,
            version: r.version,
            submitted_by: r.submitted_by!,
            submitted_at: isoSeconds(r.submitted_at)!,
            checks: r.checks ?? [],
          },
    decline_reason: r.decline_reason,
  };
  const listed: Messages = messages ? { messages: messages.map(messageView) } : { messages_count: r.messages_count };
  return Object.assign(view, listed, { created_at: isoSeconds(r.created_at)!, updated_at: isoSeconds(r.updated_at)! });
}
