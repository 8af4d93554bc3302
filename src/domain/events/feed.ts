import type { Db } from '../../db/handle.js';
import { join, type Sql, sql, statement } from '../../db/sql.js';
import { isoSeconds } from '../../common/iso-seconds.js';
import { notFound } from '../errors.js';
import { type EventActor, type EventOwner, type EventType, eventId, requireReceivable } from './event-types.js';

export interface EventView {
  id: string;
  type: EventType;
  created_at: string;
  actor: EventActor;
  previous_status: string | null;
  data: unknown;
}

interface EventRow {
  position: number;
  type: EventType;
  created_at: Date;
  actor: EventActor;
  previous_status: string | null;
  data: unknown;
}

export const eventView = (r: EventRow): EventView => ({
  id: eventId(r.position),
  type: r.type,
  created_at: isoSeconds(r.created_at)!,
  actor: r.actor,
  previous_status: r.previous_status,
  data: r.data,
});

export interface EventFilters {
  type?: EventType;
  orderId?: number;
}

const COLUMNS = sql`position, type, created_at, actor, previous_status, data`;

/** The owner's rows (of events, or of orders). */
const own = (owner: EventOwner) => (owner.party === 'buyer' ? sql`workspace_id = ${owner.workspaceId}` : sql`publisher_id = ${owner.publisherId}`);

/** The owner's positioned events matching the filters, as a WHERE clause. */
function matching(owner: EventOwner, f: EventFilters): Sql {
  const clauses = [own(owner), sql`position IS NOT NULL`];
  if (f.type) clauses.push(sql`type = ${f.type}`);
  if (f.orderId !== undefined) clauses.push(sql`order_id = ${f.orderId}`);
  return join(clauses, ' AND ');
}

/**
 * The filters must name what the owner can receive: a `type` a publisher never gets is a 422,
 * and an `order_id` filter must name one of the owner's orders. Another party's order, or none, is a
 * 404 as on every order route: an empty page would look like an order of the caller's with no
 * events yet, and hide a mistyped id.
 */
async function checkFilters(q: Db, owner: EventOwner, f: EventFilters): Promise<void> {
  requireReceivable(owner, f.type ? [f.type] : undefined, 'type');
  if (f.orderId === undefined) return;
  const { rowCount } = await q.query(statement(sql`SELECT 1 FROM orders WHERE id = ${f.orderId} AND ${own(owner)}`, 'events_own_order'));
  if (!rowCount) throw notFound(`Order ${f.orderId}`);
}

/** The owner's events, newest first, a page at a time. */
export async function listEvents(q: Db, owner: EventOwner, f: EventFilters, page: number, perPage: number) {
  await checkFilters(q, owner, f);
  const where = matching(owner, f);
  const [rows, count] = await Promise.all([
    q.query<EventRow>(statement(sql`SELECT ${COLUMNS} FROM events WHERE ${where} ORDER BY position DESC LIMIT ${perPage} OFFSET ${(page - 1) * perPage}`, 'events_page')),
    q.query<{ n: number }>(statement(sql`SELECT count(*)::int AS n FROM events WHERE ${where}`, 'events_count')),
  ]);
  return { items: rows.rows.map(eventView), total: count.rows[0]!.n };
}

/**
 * The owner's events after a position, oldest first: what a follower has not seen yet. Positions
 * only grow as events become visible (domain/events/sequencer.ts), so nothing is skipped.
 */
export async function followEvents(q: Db, owner: EventOwner, f: EventFilters, after: number, limit: number) {
  await checkFilters(q, owner, f);
  // One more than asked tells whether there is more to read.
  const { rows } = await q.query<EventRow>(
    statement(sql`SELECT ${COLUMNS} FROM events WHERE ${matching(owner, f)} AND position > ${after} ORDER BY position LIMIT ${limit + 1}`, 'events_after'),
  );
  return { items: rows.slice(0, limit).map(eventView), hasMore: rows.length > limit };
}

/** The owner's latest events, oldest first: where a new follower starts. */
export async function latestEvents(q: Db, owner: EventOwner, f: EventFilters, limit: number) {
  await checkFilters(q, owner, f);
  const { rows } = await q.query<EventRow>(
    statement(sql`SELECT ${COLUMNS} FROM events WHERE ${matching(owner, f)} ORDER BY position DESC LIMIT ${limit}`, 'events_latest'),
  );
  return rows.reverse().map(eventView);
}

const PURGE_BATCH = 1000;

/**
 * Deletes events older than the retention (their deliveries go with them), oldest positions
 * first, a batch at a time. Positions follow commit order and creation times nearly so, which
 * lets the walk stop at the first batch that is not entirely old, without an index on created_at.
 */
export async function purgeOldEvents(pool: Db, now: number, retentionDays: number): Promise<number> {
  const cutoff = new Date(now - retentionDays * 86_400_000);
  let purged = 0;
  for (;;) {
    const { rows } = await pool.query<{ deleted: number; walked: number }>({
      name: 'events_purge',
      text: `WITH oldest AS (
               SELECT id, created_at FROM events WHERE position IS NOT NULL ORDER BY position LIMIT ${PURGE_BATCH}
             ), gone AS (
               DELETE FROM events e USING oldest o WHERE e.id = o.id AND o.created_at < $1 RETURNING 1
             )
             SELECT (SELECT count(*) FROM gone)::int AS deleted, (SELECT count(*) FROM oldest)::int AS walked`,
      values: [cutoff],
    });
    purged += rows[0]!.deleted;
    if (rows[0]!.deleted < PURGE_BATCH) return purged;
  }
}
