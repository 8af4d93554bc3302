import type { Db } from '../../db/handle.js';
import { sql, statement } from '../../db/sql.js';
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
  await tx.query(statement(eventsInsert(eventRows(list), new Date(now)), 'events_record'));
}

/**
 * The INSERT of events: the rows `eventRows` gives, created at `at` (a Date, or a `param` the
 * caller's statement shares). `recordEvents`' statement, and a WITH query of a caller's statement
 * that writes its change and the events describing it in one round trip: the same rows, the same
 * guarantees (written in the change's transaction, positioned by the sequencer after commit), ids
 * taken in the list's order either way.
 */
export const eventsInsert = (rows: string, at: unknown) =>
  sql`INSERT INTO events (type, workspace_id, publisher_id, order_id, actor, previous_status, data, created_at)
           SELECT e.type, e.workspace_id, e.publisher_id, e.order_id, e.actor, e.previous_status, e.data, ${at}
             FROM jsonb_to_recordset(${rows}::jsonb) AS e(type text, workspace_id int, publisher_id int, order_id bigint, actor text, previous_status text, data jsonb)`;

/**
 * Events as the one jsonb parameter of `eventsInsert`, rows of named fields: each event's data is
 * encoded once, with the list, instead of as an element of a jsonb[] array that the driver
 * escapes again character by character (half the Node CPU of the INSERT, the same database
 * time; json_to_recordset would parse each event's data twice).
 */
export function eventRows(list: NewEvent[]): string {
  return JSON.stringify(
    list.map((e) => ({
      type: e.type,
      workspace_id: e.owner.party === 'buyer' ? e.owner.workspaceId : null,
      publisher_id: e.owner.party === 'publisher' ? e.owner.publisherId : null,
      order_id: e.orderId ?? null,
      actor: e.actor,
      previous_status: e.previousStatus ?? null,
      data: e.data,
    })),
  );
}
