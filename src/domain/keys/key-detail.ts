import type { Db } from '../../db/handle.js';
import { systemClock, type Clock } from '../clock.js';
import { nextDay, nextMonth, readSpent, windowView } from './budget.js';
import { findKey, keyListing, type KeyListing, type KeyScope } from './key-service.js';

/** A day or month of a key's budget; `limit_cents` and `remaining_cents` null when the window has no limit. */
export interface WindowDetail {
  limit_cents: number | null;
  spent_cents: number;
  remaining_cents: number | null;
  resets_at: string;
}

export interface KeyDetail extends KeyListing {
  /** Null for a key that cannot place orders: it has no budget. */
  budget: { order_limit_cents: number | null; day: WindowDetail; month: WindowDetail } | null;
}

/**
 * A key and its budget as the console's key page shows it (docs/budgets.md). For a spending key,
 * what its budget (its rolled chain's) spent this UTC day and month is read whether or not the
 * window has a limit, so a person sees the spending before choosing one: one indexed read.
 */
export async function keyDetail(db: Db, scope: KeyScope, id: number, clock: Clock = systemClock): Promise<KeyDetail> {
  const row = await findKey(db, scope, id);
  const now = clock.now();
  const listing = keyListing(row, now);
  if (!row.canPlaceOrders) return { ...listing, budget: null };
  const budgetId = row.budgetKeyId ?? row.id;
  const spent = (await readSpent(db, [budgetId], now)).get(budgetId) ?? { day: 0, month: 0 };
  const window = (limit: number | null, used: number, resetsAt: number): WindowDetail => {
    const w = windowView(limit ?? 0, used, resetsAt);
    return { limit_cents: limit, spent_cents: used, remaining_cents: limit === null ? null : w.remaining_cents, resets_at: w.resets_at! };
  };
  return {
    ...listing,
    budget: {
      order_limit_cents: row.orderLimitCents,
      day: window(row.dailyLimitCents, spent.day, nextDay(now)),
      month: window(row.monthlyLimitCents, spent.month, nextMonth(now)),
    },
  };
}
