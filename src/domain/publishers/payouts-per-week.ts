import type { Db } from '../../db/handle.js';

/** One week of a publisher's payouts: its Monday (YYYY-MM-DD, UTC), the payouts earned, and in how many orders. */
export interface WeekPayouts {
  week: string;
  cents: number;
  orders: number;
}

const DAY_MS = 86_400_000;
/** The desk's chart: this week and the 11 before it. */
export const PAYOUT_WEEKS = 12;

// A week's payouts are the publisher's amounts (publisher_price_cents, the order's "Payout") of
// the placements approved that week: approval pays them into `pending`, from where the end of the
// guarantee window makes them payable (docs/link-guarantee.md). A placement refunded for a lost
// link is no payout; one whose link is lost now still is, until it is refunded. Read from the
// orders (completed_at is the approval's time on the app's clock), not the ledger's entries,
// whose times are the database's.
const statement = {
  name: 'payouts_per_week',
  text: `SELECT to_char(date_trunc('week', o.completed_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS week,
                sum(o.publisher_price_cents)::float8 AS cents, count(*)::int AS orders
           FROM orders o
          WHERE o.publisher_id = $1 AND o.status IN ('completed', 'link_lost') AND o.completed_at >= $2 AND o.completed_at < $3
          GROUP BY 1`,
};

/** The Monday 00:00 UTC of the week holding `now`. */
export function weekStart(now: number): number {
  const d = new Date(now);
  const day = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  return day - ((d.getUTCDay() + 6) % 7) * DAY_MS;
}

/** A publisher's payouts in each UTC week (Monday to Sunday) of the last 12, this one included, oldest first; a week without any is a zero. */
export async function payoutsPerWeek(q: Db, publisherId: number, now: number, weeks = PAYOUT_WEEKS): Promise<WeekPayouts[]> {
  const first = weekStart(now) - (weeks - 1) * 7 * DAY_MS;
  const { rows } = await q.query<WeekPayouts>({ ...statement, values: [publisherId, new Date(first), new Date(weekStart(now) + 7 * DAY_MS)] });
  const byWeek = new Map(rows.map((r) => [r.week, r]));
  return Array.from({ length: weeks }, (_, i) => {
    const week = new Date(first + i * 7 * DAY_MS).toISOString().slice(0, 10);
    return { week, cents: byWeek.get(week)?.cents ?? 0, orders: byWeek.get(week)?.orders ?? 0 };
  });
}
