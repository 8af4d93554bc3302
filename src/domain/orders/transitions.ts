import type { Db } from '../../db/handle.js';
import { notFound } from '../errors.js';
import * as ledger from '../ledger/ledger.js';
import { type OrderAction, requireAllowed } from './action-states.js';
import { checksAgainst } from './content-checks.js';
import type { Viewer } from './order-read.js';
import { deadlineFor, type Durations, type OrderStatus, type Party } from './states.js';

/** The order row as the state machine needs it, read under FOR UPDATE. */
export interface LockedOrder {
  id: number;
  status: OrderStatus;
  workspace_id: number;
  publisher_id: number;
  outlet_id: number;
  price: number;
  publisher_price_cents: number;
  fee_cents: number;
  turnaround_days: number;
  target_url: string;
  anchor_text: string | null;
  deadline_at: Date | null;
  outlet_domain: string;
  min_words: number;
  max_words: number;
  max_links: number;
  has_content: boolean;
  auto_approve_drafts: boolean;
  live_passed: boolean | null;
  live_returns: number;
  link_check_due_at: Date | null;
  completed_at: Date | null;
  guarantee_ends_at: Date | null;
  payout_released_at: Date | null;
}

/**
 * Locks one order for a state change — the first lock of the documented lock order (order, then
 * workspace, then publisher). Someone else's order answers 404, like a missing one.
 */
export async function lockOrder(tx: Db, orderId: number, viewer: Viewer | null): Promise<LockedOrder> {
  const owner = viewer === null ? 'true' : viewer.party === 'buyer' ? 'o.workspace_id = $2' : 'o.publisher_id = $2';
  const values = viewer === null ? [orderId] : [orderId, viewer.party === 'buyer' ? viewer.workspaceId : viewer.publisherId];
  // Lock first, read after: a statement that waited for the lock re-reads only the order row
  // (EvalPlanQual); its joins and EXISTS keep the snapshot from before the wait.
  const locked = await tx.query({
    name: `order_lock_only_${viewer?.party ?? 'system'}`,
    text: `SELECT o.id FROM orders o WHERE o.id = $1 AND ${owner} FOR UPDATE`,
    values,
  });
  if (!locked.rows[0]) throw notFound('Order');
  const { rows } = await tx.query<LockedOrder>({
    name: `order_lock_${viewer?.party ?? 'system'}`,
    text: `SELECT o.id, o.status, o.workspace_id, o.publisher_id, o.outlet_id, o.price, o.publisher_price_cents,
                  o.fee_cents, o.turnaround_days, o.target_url, o.anchor_text, o.deadline_at,
                  ol.domain AS outlet_domain, o.min_words, o.max_words, o.max_links,
                  EXISTS (SELECT 1 FROM order_contents c WHERE c.order_id = o.id) AS has_content,
                  w.auto_approve_drafts, o.live_passed, o.live_returns, o.link_check_due_at,
                  o.completed_at, o.guarantee_ends_at, o.payout_released_at
             FROM orders o JOIN outlets ol ON ol.id = o.outlet_id
             JOIN workspaces w ON w.id = o.workspace_id
            WHERE o.id = $1 AND ${owner}`,
    values,
  });
  if (!rows[0]) throw notFound('Order');
  return rows[0];
}

/** 409 with the current status unless `action` may start from the order's (action-states.ts). */
export function requireStatus(order: LockedOrder, action: OrderAction): void {
  requireAllowed(action, order.status);
}

/** Moves the order into `status`, starting that state's deadline at `now`. */
export async function enterState(
  tx: Db,
  order: LockedOrder,
  status: OrderStatus,
  now: number,
  durations: Durations,
  extra: { publishingBuyerContent?: boolean; liveUrl?: string; declineReason?: string } = {},
): Promise<void> {
  const deadline = deadlineFor(status, now, durations, {
    turnaroundDays: order.turnaround_days,
    ...(extra.publishingBuyerContent !== undefined ? { publishingBuyerContent: extra.publishingBuyerContent } : {}),
  });
  const at = new Date(now);
  await tx.query({
    name: 'order_enter_state',
    text: `UPDATE orders SET status = $2::order_status, deadline_at = $3, state_entered_at = $4, updated_at = $4,
             accepted_at = CASE WHEN $2 IN ('writing', 'publishing') AND accepted_at IS NULL THEN $4 ELSE accepted_at END,
             published_at = CASE WHEN $2 = 'live_review' THEN $4 ELSE published_at END,
             completed_at = CASE WHEN $2 IN ('completed', 'declined', 'expired', 'cancelled') THEN COALESCE(completed_at, $4) ELSE completed_at END,
             live_url = COALESCE($5, live_url), decline_reason = COALESCE($6, decline_reason),
             expired_in = CASE WHEN $2 = 'expired' THEN status ELSE expired_in END
           WHERE id = $1`,
    values: [order.id, status, deadline, at, extra.liveUrl ?? null, extra.declineReason ?? null],
  });
  order.status = status;
  order.deadline_at = deadline;
}

/** Held → available at the frozen price: declined, expired or cancelled orders. */
export async function refund(tx: Db, order: LockedOrder): Promise<void> {
  const accounts = await ledger.lockWorkspace(tx, order.workspace_id);
  await ledger.post(tx, [ledger.refund(accounts, order)]);
}

/** Held → the publisher's pending + platform fees at the frozen amounts: approved placements. */
export async function release(tx: Db, order: LockedOrder): Promise<void> {
  const accounts = await ledger.lockWorkspace(tx, order.workspace_id);
  const { pending } = await ledger.publisherAccounts(tx, order.publisher_id);
  const fees = order.fee_cents > 0 ? await ledger.platformAccount(tx, 'fees') : 0;
  await ledger.post(tx, [ledger.release(accounts, order, pending, fees)]);
}

/** The guarantee ended with the link alive: the publisher's pending → payable. */
export async function payOut(tx: Db, order: LockedOrder): Promise<void> {
  const { pending, payable } = await ledger.publisherAccounts(tx, order.publisher_id);
  await ledger.post(tx, [ledger.payout(order, pending, payable)]);
}

/** A lost link not restored in time: pending + fees → the buyer's available, the full price. */
export async function refundGuarantee(tx: Db, order: LockedOrder): Promise<void> {
  const accounts = await ledger.lockWorkspace(tx, order.workspace_id);
  const { pending } = await ledger.publisherAccounts(tx, order.publisher_id);
  const fees = order.fee_cents > 0 ? await ledger.platformAccount(tx, 'fees') : 0;
  await ledger.post(tx, [ledger.guaranteeRefund(accounts, order, pending, fees)]);
}

/** Stores a new content version with its checks. */
export async function addContent(
  tx: Db,
  order: Pick<LockedOrder, 'id' | 'target_url' | 'anchor_text' | 'min_words' | 'max_words' | 'max_links'>,
  content: { title: string; body: string },
  by: Party,
  now: number,
): Promise<void> {
  const checks = checksAgainst(order, content);
  await tx.query({
    name: 'order_add_content',
    text: `INSERT INTO order_contents (order_id, version, title, body, submitted_by, submitted_at, checks)
           SELECT $1, COALESCE(max(version), 0) + 1, $2, $3, $4::order_party, $5, $6::jsonb
             FROM order_contents WHERE order_id = $1`,
    values: [order.id, content.title, content.body, by, new Date(now), JSON.stringify(checks)],
  });
}

export async function addMessage(tx: Db, orderId: number, author: Party, body: string, now: number) {
  const { rows } = await tx.query<{ id: number; body: string; author: Party; created_at: Date }>({
    name: 'order_add_message',
    text: `INSERT INTO order_messages (order_id, author, body, created_at) VALUES ($1, $2::order_party, $3, $4)
           RETURNING id, body, author, created_at`,
    values: [orderId, author, body, new Date(now)],
  });
  await tx.query({ name: 'order_touch', text: 'UPDATE orders SET updated_at = $2 WHERE id = $1', values: [orderId, new Date(now)] });
  return rows[0]!;
}
