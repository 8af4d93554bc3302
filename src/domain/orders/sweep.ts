import type pg from 'pg';
import { withTransaction } from '../../db/tx.js';
import type { Durations } from './states.js';
import { enterState, lockOrder, refund, release } from './transitions.js';

export interface SweepResult {
  expired: number;
  auto_approved: number;
  drafts_auto_approved: number;
}

const BATCH = 100;

/**
 * Applies every passed deadline: refunds expired orders, auto-approves drafts and placements.
 * Safe with several processes: candidates are claimed with FOR UPDATE SKIP LOCKED, and each is
 * re-read under its lock, so an order another process (or a buyer's click) just moved is skipped.
 */
export async function sweepDeadlines(pool: pg.Pool, now: number, durations: Durations): Promise<SweepResult> {
  const result: SweepResult = { expired: 0, auto_approved: 0, drafts_auto_approved: 0 };
  for (;;) {
    const handled = await withTransaction(pool, async (tx) => {
      const { rows } = await tx.query<{ id: number }>({
        name: 'sweep_claim',
        text: `SELECT id FROM orders
                WHERE status NOT IN ('completed', 'declined', 'expired', 'cancelled') AND deadline_at <= $1
                ORDER BY deadline_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED`,
        values: [new Date(now)],
      });
      for (const { id } of rows) {
        const order = await lockOrder(tx, id, null);
        if (order.deadline_at === null || order.deadline_at.getTime() > now) continue;
        switch (order.status) {
          case 'draft_review':
            await enterState(tx, order, 'publishing', now, durations, { publishingBuyerContent: false });
            result.drafts_auto_approved++;
            break;
          case 'live_review':
            await enterState(tx, order, 'completed', now, durations);
            await release(tx, order);
            result.auto_approved++;
            break;
          case 'awaiting_content':
          case 'awaiting_acceptance':
          case 'writing':
          case 'publishing':
            await enterState(tx, order, 'expired', now, durations);
            await refund(tx, order);
            result.expired++;
            break;
          default:
            break;
        }
      }
      return rows.length;
    });
    if (handled < BATCH) break;
  }
  await pool.query({ name: 'idempotency_purge', text: 'DELETE FROM idempotency_records WHERE expires_at <= $1', values: [new Date(now)] });
  return result;
}
