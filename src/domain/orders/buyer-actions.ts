import type pg from 'pg';
import type { Tx } from '../../db/tx.js';
import type { Clock } from '../clock.js';
import { type Answer, type OnceKey, type Outcome, recordOnce, type StoredAnswer } from '../idempotency/record-once.js';
import type { WorkspacePrincipal } from '../keys/principal.js';
import { recordMessageReceived, recordOrderEvent } from '../events/record.js';
import { messageView } from './order-view.js';
import { quoteChanged, recheckSpendingKey } from './place-orders.js';
import type { Durations } from './states.js';
import { addContent, addMessage, enterState, lockOrder, refund, release, requireStatus } from './transitions.js';

const buyer = (p: WorkspacePrincipal) => ({ party: 'buyer' as const, workspaceId: p.workspaceId });

/** The buyer's side of the state table (docs/orders.md). Each runs in the caller's transaction. */
export function buyerActions(durations: Durations) {
  return {
    /** awaiting_content → awaiting_acceptance with the buyer's content. */
    async submitContent(tx: Tx, p: WorkspacePrincipal, orderId: number, content: { title: string; body: string }, now: number) {
      const order = await lockOrder(tx, orderId, buyer(p));
      requireStatus(order, ['awaiting_content'], 'submit content');
      await addContent(tx, order, content, 'buyer', now);
      await enterState(tx, order, 'awaiting_acceptance', now, durations);
      return (await recordOrderEvent(tx, 'order.content_submitted', orderId, { actor: 'buyer', previousStatus: 'awaiting_content' }, now)).buyer;
    },

    /** draft_review → publishing. */
    async approveDraft(tx: Tx, p: WorkspacePrincipal, orderId: number, now: number) {
      const order = await lockOrder(tx, orderId, buyer(p));
      requireStatus(order, ['draft_review'], 'approve the draft');
      await enterState(tx, order, 'publishing', now, durations, { publishingBuyerContent: false });
      return (await recordOrderEvent(tx, 'order.draft_approved', orderId, { actor: 'buyer', previousStatus: 'draft_review' }, now)).buyer;
    },

    /** live_review → completed, paying the publisher and the fee from escrow. */
    async approvePlacement(tx: Tx, p: WorkspacePrincipal, orderId: number, now: number) {
      await recheckSpendingKey(tx, p.keyId);
      const order = await lockOrder(tx, orderId, buyer(p));
      requireStatus(order, ['live_review'], 'approve the placement');
      await enterState(tx, order, 'completed', now, durations);
      await release(tx, order);
      return (await recordOrderEvent(tx, 'order.completed', orderId, { actor: 'buyer', previousStatus: 'live_review' }, now)).buyer;
    },

    /** Before the publisher has started: cancelled, with the price back in the available balance. */
    async cancel(tx: Tx, p: WorkspacePrincipal, orderId: number, now: number) {
      const order = await lockOrder(tx, orderId, buyer(p));
      requireStatus(order, ['awaiting_content', 'awaiting_acceptance'], 'cancel');
      const previousStatus = order.status;
      await enterState(tx, order, 'cancelled', now, durations);
      await refund(tx, order);
      return (await recordOrderEvent(tx, 'order.cancelled', orderId, { actor: 'buyer', previousStatus }, now)).buyer;
    },

    async message(tx: Tx, p: WorkspacePrincipal, orderId: number, body: string, now: number) {
      const order = await lockOrder(tx, orderId, buyer(p));
      const message = await addMessage(tx, orderId, 'buyer', body, now);
      await recordMessageReceived(tx, order, message, now);
      return messageView(message);
    },
  };
}

type ApprovedOrder = Awaited<ReturnType<ReturnType<typeof buyerActions>['approvePlacement']>>;

/**
 * Approves a live placement whose price the user confirmed (an MCP confirmation), once under
 * `once`: a price other than the quoted one is refused (quote_changed) and nothing is paid.
 */
export async function approveConfirmed(
  deps: { pool: pg.Pool; clock: Clock; durations: Durations },
  p: WorkspacePrincipal,
  orderId: number,
  options: {
    once: OnceKey;
    quotedTotalCents: number;
    fmt: (cents: number) => string;
    encode: (outcome: Outcome<ApprovedOrder>) => StoredAnswer | undefined;
  },
): Promise<Answer> {
  const now = deps.clock.now();
  return recordOnce(deps.pool, { key: options.once, now, encode: options.encode }, async (tx) => {
    const order = await buyerActions(deps.durations).approvePlacement(tx, p, orderId, now);
    if (order.price !== options.quotedTotalCents) throw quoteChanged(options.quotedTotalCents, order.price, options.fmt);
    return order;
  });
}
