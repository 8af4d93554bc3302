import type { Db } from '../../db/handle.js';
import { orderStatuses, turnOf } from './states.js';
import { type EventView, eventView } from '../events/feed.js';
import { type EventOwner, ownerColumn, ownerId } from '../events/event-types.js';

/** How far back the console's overview looks for events that need the person (7 days). */
export const ACTION_WINDOW_MS = 7 * 86_400_000;

/**
 * The owner's events of the last 7 days that still need its action, newest first (the console's
 * overview): an order event that left the order in a state whose turn is the owner's, while the
 * order is still in that state; and a message from the other party on an order not finished.
 * An event whose step has been taken since (the order moved on) no longer needs anything, and
 * neither does one the owner caused itself, except a placement (the buyer's content may be due).
 */
export async function eventsNeedingAction(pool: Db, owner: EventOwner, now: number, limit: number): Promise<Array<EventView & { order_id: number }>> {
  const mine = orderStatuses.filter((s) => turnOf[s] === owner.party);
  const open = orderStatuses.filter((s) => turnOf[s] !== null);
  const { rows } = await pool.query({
    name: `events_needing_action_${owner.party}`,
    text: `SELECT e.position, e.type, e.created_at, e.actor, e.previous_status, e.data, e.order_id
             FROM events e JOIN orders o ON o.id = e.order_id
            WHERE e.${ownerColumn(owner)} = $1 AND e.position IS NOT NULL AND e.created_at >= $2
              AND (e.actor <> $6 OR e.type = 'order.placed')
              AND ((e.type = 'order.message_received' AND o.status = ANY($4::order_status[]))
                OR (e.type <> 'order.message_received' AND o.status = ANY($3::order_status[]) AND e.data->>'status' = o.status::text))
            ORDER BY e.position DESC LIMIT $5`,
    values: [ownerId(owner), new Date(now - ACTION_WINDOW_MS), mine, open, limit, owner.party],
  });
  return rows.map((r) => ({ ...eventView(r), order_id: Number(r.order_id) }));
}
