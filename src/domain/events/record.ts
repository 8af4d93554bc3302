import type { Db } from '../../db/handle.js';
import type { OrderStatus } from '../../common/enums.js';
import type { EventActor, EventOwner, EventType } from './event-types.js';

export interface NewEvent {
  type: EventType;
  owner: EventOwner;
  orderId?: number | null;
  actor: EventActor;
  /** For an order's state change: the state it left (for order.expired, the state it expired in). */
  previousStatus?: OrderStatus | null;
  data: unknown;
}

/**
 * Writes events in the caller's transaction (the outbox): they exist if and only if the change
 * they describe commits. Nothing is sent from here; the sequencer positions them after commit.
 */
export async function recordEvents(tx: Db, list: NewEvent[], now: number): Promise<void> {
  if (list.length === 0) return;
  await tx.query({
    name: 'events_record',
    text: `INSERT INTO events (type, workspace_id, publisher_id, order_id, actor, previous_status, data, created_at)
           SELECT t, w, p, o, a, s, d, $8 FROM unnest($1::text[], $2::int[], $3::int[], $4::bigint[], $5::text[], $6::text[], $7::jsonb[])
             AS e(t, w, p, o, a, s, d)`,
    values: [
      list.map((e) => e.type),
      list.map((e) => (e.owner.party === 'buyer' ? e.owner.workspaceId : null)),
      list.map((e) => (e.owner.party === 'publisher' ? e.owner.publisherId : null)),
      list.map((e) => e.orderId ?? null),
      list.map((e) => e.actor),
      list.map((e) => e.previousStatus ?? null),
      list.map((e) => JSON.stringify(e.data)),
      new Date(now),
    ],
  });
}
