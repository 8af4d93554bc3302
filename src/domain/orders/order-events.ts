import type { Db } from '../../db/handle.js';
import { type NewEvent, recordEvents } from '../events/record.js';
import type { EventActor, EventOwner, OrderEventType } from '../events/event-types.js';
import { getOrderViews, type OrderViews } from './order-read.js';
import { type MessageRow, messageView, type OrderRow, orderView } from './order-view.js';
import type { OrderStatus, Party } from './states.js';

// An order's changes as events (docs/events.md), written in the transaction that makes the change.

/** One event per party for each order: the buyer's view to its workspace, the publisher's to the publisher. */
function perParty(views: OrderViews[], type: OrderEventType, actor: EventActor, previousStatus: OrderStatus | null): NewEvent[] {
  return views.flatMap((v) => [
    { type, owner: { party: 'buyer', workspaceId: v.workspaceId }, orderId: v.buyer.id, actor, previousStatus, data: v.buyer },
    { type, owner: { party: 'publisher', publisherId: v.publisherId }, orderId: v.publisher.id, actor, previousStatus, data: v.publisher },
  ]);
}

/**
 * Records an order's change, read after the change inside its transaction, and returns both
 * views so the caller answers with the same state the events carry.
 */
export async function recordOrderEvent(
  tx: Db,
  type: OrderEventType,
  orderId: number,
  change: { actor: EventActor; previousStatus: OrderStatus | null },
  now: number,
): Promise<OrderViews> {
  const [views] = await getOrderViews(tx, [orderId]);
  if (!views) throw new Error(`order ${orderId} vanished inside its own transaction`);
  await recordEvents(tx, perParty([views], type, change.actor, change.previousStatus), now);
  return views;
}

/**
 * `order.placed` for newly placed orders (both parties, each its own view), for the placing
 * statement to write (`eventsInsert`). The placement knows the rows it writes (a new order has
 * no message yet), so nothing is read back.
 */
export function orderPlacedEvents(placed: Array<{ workspaceId: number; publisherId: number; row: OrderRow }>): NewEvent[] {
  const views = placed.map((p) => ({
    workspaceId: p.workspaceId,
    publisherId: p.publisherId,
    buyer: orderView(p.row, 'buyer', []),
    publisher: orderView(p.row, 'publisher', []),
  }));
  return perParty(views, 'order.placed', 'buyer', null);
}

/** `order.message_received`, to the party the message is for (the author knows it sent it). */
export async function recordMessageReceived(
  tx: Db,
  order: { id: number; workspace_id: number; publisher_id: number },
  message: MessageRow,
  now: number,
): Promise<void> {
  const recipient: Party = message.author === 'buyer' ? 'publisher' : 'buyer';
  const owner: EventOwner =
    recipient === 'buyer' ? { party: 'buyer', workspaceId: order.workspace_id } : { party: 'publisher', publisherId: order.publisher_id };
  await recordEvents(
    tx,
    [{ type: 'order.message_received', owner, orderId: order.id, actor: message.author, data: { ...messageView(message), order_id: order.id } }],
    now,
  );
}
