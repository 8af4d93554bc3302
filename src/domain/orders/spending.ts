import type { Db } from '../../db/handle.js';
import { dayStart, REFUNDED_STATUSES } from '../keys/budget.js';

/** One UTC day of spending: the day (YYYY-MM-DD), what was spent, and in how many orders. */
export interface DaySpending {
  day: string;
  cents: number;
  orders: number;
}

const DAY_MS = 86_400_000;
/** The charts' window: today and the 29 UTC days before it. */
export const SPENDING_DAYS = 30;

// What a day spent, as a key's budget counts it (docs/budgets.md, "What counts"): the price of the
// orders placed that UTC day, less those refunded before completion (declined, cancelled,
// expired, a lost link refunded), which give it back in the day they were placed. The same rule
// for a workspace's chart and a key's, so the key page's bar for today is its "Today" spent.
const notRefunded = `o.status NOT IN (${REFUNDED_STATUSES.map((s) => `'${s}'`).join(', ')})`;
const perDay = `to_char(o.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, sum(o.price)::float8 AS cents, count(*)::int AS orders`;

const workspaceStatement = {
  name: 'spending_per_day_workspace',
  text: `SELECT ${perDay} FROM orders o
          WHERE o.workspace_id = $1 AND o.created_at >= $2 AND o.created_at < $3 AND ${notRefunded}
          GROUP BY 1`,
};

// A key's spending is its budget's: every key of its rolled chain (api_keys.budget_key_id), as readSpent counts it.
const keyStatement = {
  name: 'spending_per_day_key',
  text: `WITH budget AS (SELECT COALESCE(budget_key_id, id) AS id FROM api_keys WHERE id = $4 AND workspace_id = $1)
         SELECT ${perDay} FROM orders o
          WHERE o.placed_by_key_id IN (SELECT k.id FROM api_keys k, budget b WHERE k.id = b.id OR k.budget_key_id = b.id)
            AND o.workspace_id = $1 AND o.created_at >= $2 AND o.created_at < $3 AND ${notRefunded}
          GROUP BY 1`,
};

/** The UTC days of the window ending today, oldest first. */
export function spendingDays(now: number, days = SPENDING_DAYS): string[] {
  const today = dayStart(now);
  return Array.from({ length: days }, (_, i) => new Date(today - (days - 1 - i) * DAY_MS).toISOString().slice(0, 10));
}

/**
 * What a workspace, or one of its keys (with the keys it was rolled from), spent on each UTC day
 * of the last 30 (today included), oldest first; a day without orders is a zero. A key of another
 * workspace spends nothing here.
 */
export async function spendingPerDay(q: Db, scope: { workspaceId: number; keyId?: number }, now: number, days = SPENDING_DAYS): Promise<DaySpending[]> {
  const from = new Date(dayStart(now) - (days - 1) * DAY_MS);
  const to = new Date(dayStart(now) + DAY_MS);
  const { rows } = await q.query<DaySpending>(
    scope.keyId === undefined
      ? { ...workspaceStatement, values: [scope.workspaceId, from, to] }
      : { ...keyStatement, values: [scope.workspaceId, from, to, scope.keyId] },
  );
  const byDay = new Map(rows.map((r) => [r.day, r]));
  return spendingDays(now, days).map((day) => ({ day, cents: byDay.get(day)?.cents ?? 0, orders: byDay.get(day)?.orders ?? 0 }));
}
