import type { Db } from '../../db/handle.js';
import { DomainError } from '../errors.js';
import { recordEvents } from '../events/record.js';
import { isoSeconds } from '../../common/iso-seconds.js';

/**
 * A spending key's budget (docs/budgets.md): a limit per order, per UTC calendar day and per UTC
 * calendar month. What counts is the price of the orders the key (and the keys of its rolled
 * chain) placed in the window, less the ones refunded before completion.
 */
export interface KeyLimits {
  order_limit_cents: number | null;
  daily_limit_cents: number | null;
  monthly_limit_cents: number | null;
  /** The id every key of a rolled chain shares. */
  budget_id: number;
}

export type BudgetWindow = 'order' | 'day' | 'month';

/** Orders in these states were refunded before completion: they give their budget back. */
export const REFUNDED_STATUSES = ['declined', 'expired', 'cancelled', 'link_refunded'] as const;

export const dayStart = (now: number) => {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
};
export const monthStart = (now: number) => {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
};
export const nextDay = (now: number) => dayStart(now) + 86_400_000;
export const nextMonth = (now: number) => {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
};

export const hasSpendLimits = (l: KeyLimits) => l.daily_limit_cents !== null || l.monthly_limit_cents !== null;

export interface Spent {
  day: number;
  month: number;
}

const spentStatement = {
  name: 'key_budget_spent',
  text: `SELECT b.id AS budget_id,
                COALESCE(sum(o.price) FILTER (WHERE o.created_at >= $2), 0)::float8 AS day,
                COALESCE(sum(o.price), 0)::float8 AS month
           FROM unnest($1::int[]) AS b(id)
           LEFT JOIN api_keys k ON k.id = b.id OR k.budget_key_id = b.id
           LEFT JOIN orders o ON o.placed_by_key_id = k.id AND o.created_at >= $3
                AND o.status NOT IN (${REFUNDED_STATUSES.map((s) => `'${s}'`).join(', ')})
          GROUP BY b.id`,
};

/** What each budget spent in the current day and month: one statement, whatever the number of budgets. */
export async function readSpent(q: Db, budgetIds: number[], now: number): Promise<Map<number, Spent>> {
  const spent = new Map<number, Spent>();
  if (budgetIds.length === 0) return spent;
  const { rows } = await q.query<{ budget_id: number; day: number; month: number }>({
    ...spentStatement,
    values: [budgetIds, new Date(dayStart(now)), new Date(monthStart(now))],
  });
  for (const r of rows) spent.set(r.budget_id, { day: r.day, month: r.month });
  return spent;
}

export interface WindowView {
  limit_cents: number;
  spent_cents: number;
  remaining_cents: number;
  resets_at: string | null;
}

export function windowView(limit: number, spent: number, resetsAt: number | null): WindowView {
  return { limit_cents: limit, spent_cents: spent, remaining_cents: Math.max(0, limit - spent), resets_at: resetsAt === null ? null : isoSeconds(new Date(resetsAt)) };
}

/**
 * The first window the order's `total` would overrun (per order, then day, then month), or
 * undefined when the budget allows it. `spent` is what the budget spent before this order.
 */
export function overrun(limits: KeyLimits, spent: Spent, total: number, now: number): { window: BudgetWindow; view: WindowView } | undefined {
  if (limits.order_limit_cents !== null && total > limits.order_limit_cents) {
    return { window: 'order', view: windowView(limits.order_limit_cents, total, null) };
  }
  if (limits.daily_limit_cents !== null && spent.day + total > limits.daily_limit_cents) {
    return { window: 'day', view: windowView(limits.daily_limit_cents, spent.day, nextDay(now)) };
  }
  if (limits.monthly_limit_cents !== null && spent.month + total > limits.monthly_limit_cents) {
    return { window: 'month', view: windowView(limits.monthly_limit_cents, spent.month, nextMonth(now)) };
  }
  return undefined;
}

/** A window as shown: the amounts and their `_formatted` strings. */
export function formatWindow(w: WindowView, fmt: (c: number) => string) {
  return {
    ...w,
    limit_formatted: fmt(w.limit_cents),
    spent_formatted: fmt(w.spent_cents),
    remaining_formatted: fmt(w.remaining_cents),
  };
}

const windowNames: Record<BudgetWindow, string> = { order: "this key's limit per order", day: "this key's daily budget", month: "this key's monthly budget" };

export function budgetExceeded(window: BudgetWindow, view: WindowView, total: number, fmt: (c: number) => string): DomainError {
  const resets = view.resets_at ? ` It resets at ${view.resets_at}.` : '';
  const left = window === 'order' ? '' : ` ${fmt(view.remaining_cents)} of ${fmt(view.limit_cents)} is left.`;
  return new DomainError(
    'budget_exceeded',
    `This order totals ${fmt(total)}, more than ${windowNames[window]} allows.${left}${resets} Nothing was spent. Ask the key's owner to raise the budget, or order less.`,
    { budget: { window, ...formatWindow(view, fmt) } },
  );
}

/** A key's budget as `GET /me` shows it; null for a key without limits or expiry. */
export function budgetView(limits: KeyLimits, expiresAt: Date | null, spent: Spent | undefined, now: number, fmt: (c: number) => string) {
  if (limits.order_limit_cents === null && !hasSpendLimits(limits) && expiresAt === null) return null;
  const s = spent ?? { day: 0, month: 0 };
  const timed = (limit: number, used: number, resetsAt: number) => ({ ...formatWindow(windowView(limit, used, resetsAt), fmt), resets_at: isoSeconds(new Date(resetsAt))! });
  return {
    order_limit_cents: limits.order_limit_cents,
    order_limit_formatted: limits.order_limit_cents === null ? null : fmt(limits.order_limit_cents),
    day: limits.daily_limit_cents === null ? null : timed(limits.daily_limit_cents, s.day, nextDay(now)),
    month: limits.monthly_limit_cents === null ? null : timed(limits.monthly_limit_cents, s.month, nextMonth(now)),
    expires_at: isoSeconds(expiresAt),
  };
}

export type BudgetView = NonNullable<ReturnType<typeof budgetView>>;

/**
 * A quote's view of the budget: refused (budget_exceeded) when placing `total` now would be, else
 * the budget as it would be after the order.
 */
export function budgetAfter(limits: KeyLimits, view: BudgetView, total: number, now: number, fmt: (c: number) => string) {
  const spent = { day: view.day?.spent_cents ?? 0, month: view.month?.spent_cents ?? 0 };
  const over = overrun(limits, spent, total, now);
  if (over) throw budgetExceeded(over.window, over.view, total, fmt);
  return budgetView(limits, view.expires_at === null ? null : new Date(view.expires_at), { day: spent.day + total, month: spent.month + total }, now, fmt);
}

/** A window that an accepted order brought to exactly its limit: what `key.budget_exhausted` reports. */
export interface Exhausted {
  workspaceId: number;
  budgetId: number;
  key: { id: number; name: string; prefix: string };
  window: 'day' | 'month';
  limit: number;
  fmt: (c: number) => string;
}

/** The windows that `total`, added to `before`, runs out (remaining from above zero to zero). */
export function windowsRunOut(limits: KeyLimits, before: Spent, total: number): Array<{ window: 'day' | 'month'; limit: number }> {
  const out: Array<{ window: 'day' | 'month'; limit: number }> = [];
  const d = limits.daily_limit_cents;
  const m = limits.monthly_limit_cents;
  if (d !== null && before.day < d && before.day + total >= d) out.push({ window: 'day', limit: d });
  if (m !== null && before.month < m && before.month + total >= m) out.push({ window: 'month', limit: m });
  return out;
}

const exhaustedColumn = { day: 'budget_day_exhausted_at', month: 'budget_month_exhausted_at' } as const;

/**
 * Records `key.budget_exhausted` for each window run out, once per window: the budget's first key
 * remembers when each window last ran out, so a refund and a second run-out in the same window
 * send nothing more. In the placement's transaction, under its lock.
 */
export async function recordExhausted(tx: Db, list: Exhausted[], now: number): Promise<void> {
  for (const e of list) {
    const start = e.window === 'day' ? dayStart(now) : monthStart(now);
    const column = exhaustedColumn[e.window];
    const { rowCount } = await tx.query({
      name: `key_budget_exhausted_${e.window}`,
      text: `UPDATE api_keys SET ${column} = $2 WHERE id = $1 AND (${column} IS NULL OR ${column} < $3)`,
      values: [e.budgetId, new Date(now), new Date(start)],
    });
    if (!rowCount) continue;
    const view = windowView(e.limit, e.limit, e.window === 'day' ? nextDay(now) : nextMonth(now));
    const data = { key: e.key, window: e.window, ...formatWindow(view, e.fmt) };
    await recordEvents(tx, [{ type: 'key.budget_exhausted', owner: { party: 'buyer', workspaceId: e.workspaceId }, actor: 'buyer', data }], now);
  }
}
