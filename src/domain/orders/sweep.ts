import { isDatabaseUnavailable } from '../../db/errors.js';
import { withTransaction, type Db } from '../../db/handle.js';
import type { Durations } from './states.js';
import { recordOrderEvent } from './order-events.js';
import { enterState, lockOrder, refund } from './transitions.js';
import { completePlacement, failedAtReview, refundLostLink } from './guarantee.js';

export interface SweepResult {
  expired: number;
  auto_approved: number;
  drafts_auto_approved: number;
  /** Placements whose check failed, sent back to the publisher at the review deadline. */
  returned: number;
  /** Lost links not restored by restore_by, refunded. */
  link_refunded: number;
}

const BATCH = 100;
const OPEN = `status NOT IN ('completed', 'declined', 'expired', 'cancelled')`;

/**
 * Applies every passed deadline: refunds expired orders, auto-approves drafts and placements.
 * Each order is handled in a transaction of its own, taking its locks in the documented order
 * (the order, its workspace, the publisher, the platform) and holding none of another order's:
 * one transaction for many orders would hold one order's publisher and fee rows while waiting
 * for the next order's workspace, which a buyer's approval can hold while it waits for those rows
 * (a deadlock). Safe with several processes: each order is claimed with FOR UPDATE SKIP LOCKED
 * and re-read under its lock, so an order another process (or a buyer's click) holds or just
 * moved is skipped.
 */
export async function sweepDeadlines(pool: Db, now: number, durations: Durations): Promise<SweepResult> {
  const result: SweepResult = { expired: 0, auto_approved: 0, drafts_auto_approved: 0, returned: 0, link_refunded: 0 };
  const failed: Array<{ id: number; err: unknown }> = [];
  const at = new Date(now);
  // Candidates in deadline order, a page at a time; the keyset moves past skipped ones.
  // The deadline travels as PostgreSQL's own text, exact to the microsecond (a Date keeps ms).
  let after = { deadline: '-infinity', id: 0 };
  for (;;) {
    const { rows } = await pool.query<{ id: number; deadline: string }>({
      name: 'sweep_candidates',
      text: `SELECT id, deadline_at::text AS deadline FROM orders
              WHERE ${OPEN} AND deadline_at <= $1 AND (deadline_at, id) > ($2::timestamptz, $3)
              ORDER BY deadline_at, id LIMIT ${BATCH}`,
      values: [at, after.deadline, after.id],
    });
    for (const { id } of rows) {
      try {
        const done = await sweepOne(pool, id, now, durations);
        if (done) result[done]++;
      } catch (err) {
        // An unreachable database stops the sweep; anything else is this order's own problem,
        // which must not keep every later deadline waiting behind it, run after run.
        if (isDatabaseUnavailable(err)) throw err;
        failed.push({ id, err });
      }
    }
    if (rows.length < BATCH) break;
    const last = rows[rows.length - 1]!;
    after = { deadline: last.deadline, id: last.id };
  }
  await pool.query({ name: 'idempotency_purge', text: 'DELETE FROM idempotency_records WHERE expires_at <= $1', values: [new Date(now)] });
  await pool.query({ name: 'person_idempotency_purge', text: 'DELETE FROM person_idempotency_records WHERE expires_at <= $1', values: [new Date(now)] });
  if (failed.length) throw new SweepIncomplete(result, failed);
  return result;
}

/** Some orders could not be swept (each rolled back); every other one was, as `result` counts. */
export class SweepIncomplete extends Error {
  readonly failedOrderIds: number[];
  constructor(
    readonly result: SweepResult,
    failed: Array<{ id: number; err: unknown }>,
  ) {
    const first = failed[0]!.err;
    super(
      `the sweep could not handle order${failed.length > 1 ? 's' : ''} ${failed.map((f) => f.id).join(', ')} ` +
        `(${first instanceof Error ? first.message : String(first)}); it handled the others: ${JSON.stringify(result)}`,
    );
    this.name = 'SweepIncomplete';
    this.failedOrderIds = failed.map((f) => f.id);
  }
}

/** Applies one order's passed deadline, if it still has one; says what it did once committed. */
function sweepOne(pool: Db, id: number, now: number, durations: Durations): Promise<keyof SweepResult | null> {
  return withTransaction(pool, async (tx): Promise<keyof SweepResult | null> => {
    const { rows } = await tx.query({
      name: 'sweep_claim',
      text: `SELECT id FROM orders WHERE id = $1 AND ${OPEN} AND deadline_at <= $2 FOR UPDATE SKIP LOCKED`,
      values: [id, new Date(now)],
    });
    if (!rows[0]) return null;
    const order = await lockOrder(tx, id, null);
    if (order.deadline_at === null || order.deadline_at.getTime() > now) return null;
    const change = { actor: 'system' as const, previousStatus: order.status };
    switch (order.status) {
      case 'draft_review':
        await enterState(tx, order, 'publishing', now, durations, { publishingBuyerContent: false });
        await recordOrderEvent(tx, 'order.draft_approved', id, change, now);
        return 'drafts_auto_approved';
      case 'live_review':
        // Paid only for a verified link (docs/link-guarantee.md). A check still to come (due,
        // or being fetched) decides it: the next sweep after it lands applies the deadline.
        if (order.live_passed === null && order.link_check_due_at !== null) return null;
        if (order.live_passed !== true) return failedAtReview(tx, order, now, durations);
        await completePlacement(tx, order, now, durations);
        await recordOrderEvent(tx, 'order.completed', id, change, now);
        return 'auto_approved';
      case 'link_lost':
        // The last check is planned at restore_by itself: a link put back in time must not be
        // refunded because the sweep ran before the checker did. Once that check has failed, no
        // check is planned any more (nextCheckAt) and the next sweep refunds.
        if (order.link_check_due_at !== null) return null;
        await refundLostLink(tx, order, now, durations);
        return 'link_refunded';
      case 'awaiting_content':
      case 'awaiting_acceptance':
      case 'writing':
      case 'publishing':
        await enterState(tx, order, 'expired', now, durations);
        await refund(tx, order);
        await recordOrderEvent(tx, 'order.expired', id, change, now);
        return 'expired';
      default:
        return null;
    }
  });
}
