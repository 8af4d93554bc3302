import type { Db } from '../../db/handle.js';
import type { Clock } from '../clock.js';
import { type Kept, type OnceKey, type OnceOptions, runOnce } from '../idempotency/record-once.js';
import type { WorkspacePrincipal } from '../keys/principal.js';
import { type BuyerActor, isMember } from './buyer-actor.js';
import { recordMessageReceived, recordOrderEvent } from './order-events.js';
import { messageView } from './order-view.js';
import type { ApprovalReason } from '../../common/enums.js';
import { ApprovalNeeded, quoteChanged } from './placement-rules.js';
import { recheckSpendingKey } from './placement-statements.js';
import type { Durations } from './states.js';
import { addContent, addMessage, enterState, lockOrder, refund, requireStatus } from './transitions.js';
import { completePlacement } from './guarantee.js';
import { DomainError, notFound } from '../errors.js';
import { roleIn } from '../users/memberships.js';
import { requireSpend } from '../users/permissions.js';

export type { BuyerActor, WorkspaceMember } from './buyer-actor.js';

const buyer = (p: BuyerActor) => ({ party: 'buyer' as const, workspaceId: p.workspaceId });

/**
 * Paying needs a spending key, or a member whose role may spend, checked inside the paying
 * transaction: a key revoked or a role lowered a moment ago no longer pays.
 */
async function recheckSpender(tx: Db, p: BuyerActor, now: number): Promise<{ needsApproval: boolean }> {
  if (!isMember(p)) return recheckSpendingKey(tx, p.keyId, now);
  const role = await roleIn(tx, p.userId, { workspaceId: p.workspaceId });
  if (!role) throw notFound('Order');
  requireSpend(role, 'approvePlacement');
  return { needsApproval: false };
}

/**
 * Whether a key's approval of a live placement will wait for a person (the key's `needs_approval`;
 * the workspace's threshold is for placements only), for a quote: the paying transaction reads
 * the flag again. A person approving in the console never waits.
 */
export async function placementApprovalAsks(q: Db, p: WorkspacePrincipal): Promise<ApprovalReason | undefined> {
  const { rows } = await q.query<{ needs_approval: boolean }>({
    name: 'key_approval_flag',
    text: 'SELECT needs_approval FROM api_keys WHERE id = $1',
    values: [p.keyId],
  });
  return rows[0]?.needs_approval ? 'key_needs_approval' : undefined;
}

/** The buyer's side of the state table (docs/orders.md), each step in the caller's transaction. */
export function buyerActions(durations: Durations) {
  return {
    /** awaiting_content → awaiting_acceptance with the buyer's content. */
    async submitContent(tx: Db, p: BuyerActor, orderId: number, content: { title: string; body: string }, now: number) {
      const order = await lockOrder(tx, orderId, buyer(p));
      requireStatus(order, 'submitContent');
      await addContent(tx, order, content, 'buyer', now);
      await enterState(tx, order, 'awaiting_acceptance', now, durations);
      return (await recordOrderEvent(tx, 'order.content_submitted', orderId, { actor: 'buyer', previousStatus: 'awaiting_content' }, now)).buyer;
    },

    /** draft_review → publishing. */
    async approveDraft(tx: Db, p: BuyerActor, orderId: number, now: number) {
      const order = await lockOrder(tx, orderId, buyer(p));
      requireStatus(order, 'approveDraft');
      await enterState(tx, order, 'publishing', now, durations, { publishingBuyerContent: false });
      return (await recordOrderEvent(tx, 'order.draft_approved', orderId, { actor: 'buyer', previousStatus: 'draft_review' }, now)).buyer;
    },

    /**
     * live_review → completed, paying the publisher and the fee from escrow. A key that needs a
     * person's approval (docs/approvals.md) is refused with ApprovalNeeded once every check passed.
     */
    async approvePlacement(tx: Db, p: BuyerActor, orderId: number, now: number) {
      const { needsApproval } = await recheckSpender(tx, p, now);
      const order = await lockOrder(tx, orderId, buyer(p));
      requireStatus(order, 'approvePlacement');
      if (needsApproval) throw new ApprovalNeeded('key_needs_approval', order.price, [], orderId);
      await completePlacement(tx, order, now, durations);
      return (await recordOrderEvent(tx, 'order.completed', orderId, { actor: 'buyer', previousStatus: 'live_review' }, now)).buyer;
    },

    /** Before the publisher has started: cancelled, with the price back in the available balance. */
    async cancel(tx: Db, p: BuyerActor, orderId: number, now: number) {
      const order = await lockOrder(tx, orderId, buyer(p));
      requireStatus(order, 'cancel');
      const previousStatus = order.status;
      await enterState(tx, order, 'cancelled', now, durations);
      await refund(tx, order);
      return (await recordOrderEvent(tx, 'order.cancelled', orderId, { actor: 'buyer', previousStatus }, now)).buyer;
    },

    async message(tx: Db, p: BuyerActor, orderId: number, body: string, now: number) {
      const order = await lockOrder(tx, orderId, buyer(p));
      const message = await addMessage(tx, orderId, 'buyer', body, now);
      await recordMessageReceived(tx, order, message, now);
      return messageView(message);
    },
  };
}

type Steps = ReturnType<typeof buyerActions>;
type ResultOf<K extends keyof Steps> = Awaited<ReturnType<Steps[K]>>;
type ApprovedOrder = ResultOf<'approvePlacement'>;

export interface OrderActionDeps {
  pool: Db;
  clock: Clock;
  durations: Durations;
}

/**
 * The buyer's actions as routes and tools call them: one call each, in its own transaction, kept
 * once under `options.once` (a REST Idempotency-Key; none: not kept) and answered as
 * its outcome; each adapter encodes it.
 */
export const buyerOrders = {
  submitContent: (deps: OrderActionDeps, p: BuyerActor, orderId: number, content: { title: string; body: string }, options: OnceOptions) =>
    runOnce(deps, options, (tx, now) => buyerActions(deps.durations).submitContent(tx, p, orderId, content, now)),
  approveDraft: (deps: OrderActionDeps, p: BuyerActor, orderId: number, options: OnceOptions) =>
    runOnce(deps, options, (tx, now) => buyerActions(deps.durations).approveDraft(tx, p, orderId, now)),
  approve: (deps: OrderActionDeps, p: BuyerActor, orderId: number, options: OnceOptions) =>
    runOnce(deps, options, (tx, now) => buyerActions(deps.durations).approvePlacement(tx, p, orderId, now)),
  cancel: (deps: OrderActionDeps, p: BuyerActor, orderId: number, options: OnceOptions) =>
    runOnce(deps, options, (tx, now) => buyerActions(deps.durations).cancel(tx, p, orderId, now)),
  message: (deps: OrderActionDeps, p: BuyerActor, orderId: number, body: string, options: OnceOptions) =>
    runOnce(deps, options, (tx, now) => buyerActions(deps.durations).message(tx, p, orderId, body, now)),
};

/**
 * Approves a live placement whose price and page the user confirmed (an MCP confirmation), once
 * under `once`: a price other than the quoted one, or a placement live on another page than the
 * quoted one (sent back and published again since), is refused (quote_changed) and nothing is
 * paid. A confirmation that quoted no page (`quotedLiveUrl` undefined) is judged by its price.
 */
export async function approveConfirmed(
  deps: OrderActionDeps,
  p: WorkspacePrincipal,
  orderId: number,
  options: {
    once: OnceKey;
    quotedTotalCents: number;
    quotedLiveUrl?: string | null | undefined;
    fmt: (cents: number) => string;
  },
): Promise<Kept<ApprovedOrder>> {
  return runOnce(deps, options, async (tx, now) => {
    const order = await buyerActions(deps.durations).approvePlacement(tx, p, orderId, now);
    requireQuoted(order, options);
    return order;
  });
}

/** The placement is still the one quoted: its price and, when the quote named one, its page. */
export function requireQuoted(
  order: { price: number; live_url: string | null },
  quote: { quotedTotalCents: number; quotedLiveUrl?: string | null | undefined; fmt: (cents: number) => string },
): void {
  if (order.price !== quote.quotedTotalCents) throw quoteChanged(quote.quotedTotalCents, order.price, quote.fmt);
  if (quote.quotedLiveUrl !== undefined && order.live_url !== quote.quotedLiveUrl) {
    throw new DomainError(
      'quote_changed',
      `The placement changed since the quote: it is now live at ${order.live_url ?? 'no page'}, not at ${quote.quotedLiveUrl ?? 'no page'}. Nothing was paid. Get a new quote and have the user check the new page.`,
      { quoted_live_url: quote.quotedLiveUrl, live_url: order.live_url },
    );
  }
}
