import type { Db } from '../../db/handle.js';
import { recordOrderEvent } from './order-events.js';
import { enterState, type LockedOrder, payOut, refund, refundGuarantee, release } from './transitions.js';
import { DAY, type Durations } from './states.js';
import { livePassed, type LiveCheck } from '../placements/live-checks.js';

/**
 * The link guarantee's state changes (docs/link-guarantee.md), each in the caller's transaction
 * with the order locked. The link checker calls `applyCheck` with a finished check; the order
 * actions and the deadline sweep call the others.
 */

/**
 * When the next check of a placement is due: an interval on, a little earlier at random so that
 * placements completed together are not all fetched together, and never after `until` (the
 * window's end, whose check decides the payout, or a lost link's restore_by). Null once `until`
 * has passed: nothing is left to check for.
 */
export function nextCheckAt(now: number, d: Durations, until: number): Date | null {
  if (until <= now) return null;
  return new Date(Math.min(now + Math.round(d.recheckMs * (0.9 + 0.1 * Math.random())), until));
}

/** A placement was just published: its first check is due at once, and the last results are gone. */
export async function scheduleFirstCheck(tx: Db, orderId: number, now: number): Promise<void> {
  await tx.query({
    name: 'link_schedule_first',
    text: `UPDATE orders SET link_check_due_at = $2, live_checks = NULL, live_checked_at = NULL, live_passed = NULL WHERE id = $1`,
    values: [orderId, new Date(now)],
  });
}

/** A placement was approved: its guarantee window starts, with a check planned in it. */
export async function startGuarantee(tx: Db, order: LockedOrder, now: number, d: Durations): Promise<void> {
  const ends = now + d.guaranteeMs;
  const due = nextCheckAt(now, d, ends);
  await tx.query({
    name: 'link_start_guarantee',
    text: `UPDATE orders SET guarantee_ends_at = $2, link_check_due_at = $3 WHERE id = $1`,
    values: [order.id, new Date(ends), due],
  });
  order.guarantee_ends_at = new Date(ends);
  order.link_check_due_at = due;
}

/** An approved placement (by the buyer, or at the review deadline): paid into pending, window open. */
export async function completePlacement(tx: Db, order: LockedOrder, now: number, d: Durations): Promise<void> {
  await enterState(tx, order, 'completed', now, d);
  await release(tx, order);
  await startGuarantee(tx, order, now, d);
}

/**
 * The review deadline of a placement whose last check did not pass: back to the publisher with
 * a fresh deadline the first time, expired with a refund the second.
 */
export async function failedAtReview(tx: Db, order: LockedOrder, now: number, d: Durations): Promise<'returned' | 'expired'> {
  await stopChecks(tx, order.id);
  if (order.live_returns === 0) {
    await enterState(tx, order, 'publishing', now, d, { publishingBuyerContent: false });
    await tx.query({ name: 'link_returned', text: 'UPDATE orders SET live_returns = live_returns + 1 WHERE id = $1', values: [order.id] });
    order.live_returns += 1;
    await recordOrderEvent(tx, 'order.live_check_failed', order.id, { actor: 'system', previousStatus: 'live_review' }, now);
    return 'returned';
  }
  await enterState(tx, order, 'expired', now, d);
  await refund(tx, order);
  await recordOrderEvent(tx, 'order.expired', order.id, { actor: 'system', previousStatus: 'live_review' }, now);
  return 'expired';
}

/** `restore_by` passed with the link still lost: the buyer gets the full price back. */
export async function refundLostLink(tx: Db, order: LockedOrder, now: number, d: Durations): Promise<void> {
  await enterState(tx, order, 'link_refunded', now, d);
  await refundGuarantee(tx, order);
  await markLinkGone(tx, order.id);
  await recordOrderEvent(tx, 'order.link_refunded', order.id, { actor: 'system', previousStatus: 'link_lost' }, now);
}

/** Stops planning checks of an order (it left the states that are checked). */
export async function stopChecks(tx: Db, orderId: number): Promise<void> {
  await tx.query({ name: 'link_stop_checks', text: 'UPDATE orders SET link_check_due_at = NULL WHERE id = $1', values: [orderId] });
}

/** A lost link not restored by its deadline: survival not yet judged counts as lost. */
export async function markLinkGone(tx: Db, orderId: number): Promise<void> {
  await tx.query({
    name: 'link_mark_gone',
    text: `UPDATE orders SET link_check_due_at = NULL, alive_30d = COALESCE(alive_30d, false), alive_60d = COALESCE(alive_60d, false)
            WHERE id = $1`,
    values: [orderId],
  });
}

export type CheckOutcome = 'checked' | 'failed' | 'lost' | 'restored' | 'paid_out' | 'ignored';

/**
 * Applies a finished check to the order it was made for, locked by the caller, and says what it
 * did. `live_review`: the results are stored (the review deadline reads them). A completed
 * placement in its window: alive, it waits for the next check or, once the window has ended, its
 * payout becomes payable; gone, it is `link_lost` until `restore_by`. `link_lost`: alive again,
 * it is `completed` once more and nothing moves. Any other state: the check came too late.
 */
export async function applyCheck(tx: Db, order: LockedOrder, checks: LiveCheck[], now: number, d: Durations): Promise<CheckOutcome> {
  const passed = livePassed(checks);
  const inWindow = order.guarantee_ends_at !== null && order.payout_released_at === null;
  const checked = order.status === 'live_review' || (inWindow && (order.status === 'completed' || order.status === 'link_lost'));
  if (!checked) {
    await stopChecks(tx, order.id);
    return 'ignored';
  }
  const age = order.completed_at === null ? null : now - order.completed_at.getTime();
  await tx.query({
    name: 'link_record_check',
    text: `UPDATE orders SET live_checks = $2::jsonb, live_checked_at = $3, live_passed = $4,
             first_check_passed = CASE WHEN status = 'live_review' THEN COALESCE(first_check_passed, $4) ELSE first_check_passed END,
             alive_30d = CASE WHEN $5 THEN COALESCE(alive_30d, $4) ELSE alive_30d END,
             alive_60d = CASE WHEN $6 THEN COALESCE(alive_60d, $4) ELSE alive_60d END,
             link_check_due_at = NULL
           WHERE id = $1`,
    values: [order.id, JSON.stringify(checks), new Date(now), passed, age !== null && age >= 30 * DAY, age !== null && age >= 60 * DAY],
  });
  order.live_passed = passed;
  order.link_check_due_at = null;

  if (order.status === 'live_review') {
    if (passed) return 'checked';
    await recordOrderEvent(tx, 'order.live_check_failed', order.id, { actor: 'system', previousStatus: null }, now);
    return 'failed';
  }

  const ends = order.guarantee_ends_at!.getTime();
  if (order.status === 'link_lost') {
    if (!passed) {
      await planCheck(tx, order, nextCheckAt(now, d, order.deadline_at!.getTime()));
      return 'checked';
    }
    await enterState(tx, order, 'completed', now, d);
    await recordOrderEvent(tx, 'order.link_restored', order.id, { actor: 'system', previousStatus: 'link_lost' }, now);
    if (now >= ends) {
      await releasePayout(tx, order, now);
      return 'paid_out';
    }
    await planCheck(tx, order, nextCheckAt(now, d, ends));
    return 'restored';
  }

  // completed, in the window
  if (!passed) {
    await enterState(tx, order, 'link_lost', now, d);
    await planCheck(tx, order, nextCheckAt(now, d, order.deadline_at!.getTime()));
    await recordOrderEvent(tx, 'order.link_lost', order.id, { actor: 'system', previousStatus: 'completed' }, now);
    return 'lost';
  }
  if (now >= ends) {
    await releasePayout(tx, order, now);
    return 'paid_out';
  }
  await planCheck(tx, order, nextCheckAt(now, d, ends));
  return 'checked';
}

async function planCheck(tx: Db, order: LockedOrder, due: Date | null): Promise<void> {
  await tx.query({ name: 'link_plan_check', text: 'UPDATE orders SET link_check_due_at = $2 WHERE id = $1', values: [order.id, due] });
  order.link_check_due_at = due;
}

/** The window ended with the link alive: pending → payable, once. */
async function releasePayout(tx: Db, order: LockedOrder, now: number): Promise<void> {
  await payOut(tx, order);
  await tx.query({
    name: 'link_payout_released',
    text: 'UPDATE orders SET payout_released_at = $2, link_check_due_at = NULL WHERE id = $1',
    values: [order.id, new Date(now)],
  });
  order.payout_released_at = new Date(now);
}
