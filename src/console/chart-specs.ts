import { formatCents } from '../domain/money/format.js';
import type { OrderTimeline, TimelineStep } from '../domain/orders/order-timeline.js';
import type { DaySpending } from '../domain/orders/spending.js';
import type { WeekPayouts } from '../domain/publishers/payouts-per-week.js';
import { barChart, timelineChart, type TimelineDot } from './charts.js';
import { compactMoney, longDay, moment, shortDay } from './format.js';
import { statusWords } from './words.js';

// The console's four charts, from the domain's plain values to what charts.ts draws: spending per
// day (the overview, a key's page), a publisher's payouts per week (the desk), an order's timeline.

/** Amounts in a currency at a rate, as the page shows them in full and on an axis. */
export interface Money {
  currency: string;
  perUsd: number;
}

/** Spending per UTC day over the window; with a key's daily limit drawn across it when it has one. */
export function spendingChart(id: string, days: DaySpending[], money: Money, limit?: { cents: number | null; words: string }) {
  const dailyLimit = limit?.cents ?? null;
  const full = (c: number) => formatCents(c, money.currency, money.perUsd);
  return barChart({
    id,
    title: `Spending per day, last ${days.length} days`,
    unit: 'day',
    points: days.map((d) => ({ key: d.day, axis: shortDay(d.day), label: longDay(d.day), value: d.cents, count: d.orders })),
    money: full,
    tick: (c) => compactMoney(c, money.currency, money.perUsd),
    limit: dailyLimit === null ? null : { value: dailyLimit, label: `${limit!.words} ${full(dailyLimit)}` },
    every: 7,
    columns: ['Day', 'Spent'],
  });
}

/** A publisher's payouts per week, in US dollars as every payout is. */
export function payoutsChart(id: string, weeks: WeekPayouts[]) {
  return barChart({
    id,
    title: `Payouts per week, last ${weeks.length} weeks`,
    unit: 'week',
    points: weeks.map((w) => ({ key: w.week, axis: shortDay(w.week), label: `Week of ${longDay(w.week)}`, value: w.cents, count: w.orders })),
    money: (c) => formatCents(c, 'USD', 1),
    tick: (c) => compactMoney(c, 'USD', 1),
    every: 3,
    columns: ['Week', 'Payouts'],
  });
}

const STEP_WORDS: Record<TimelineStep, string> = {
  placed: 'Placed',
  content: 'Article sent',
  accepted: 'Accepted',
  draft: 'Draft',
  published: 'Published',
  checked: 'Link checked',
  paid: 'Paid',
};

/** An order's timeline: each step filled once it happened; a failed last check in red; an order that ended unpaid ends on its state. */
export function orderTimelineChart(id: string, t: OrderTimeline, now: number) {
  const dots: TimelineDot[] = t.marks.map((m) => ({
    label: m.step === 'checked' && m.at && t.checkPassed === false ? 'Check failed' : STEP_WORDS[m.step],
    state: m.at === null ? 'todo' : m.step === 'checked' && t.checkPassed === false ? 'failed' : 'done',
  }));
  const rows = t.marks.map((m, i) => ({ label: dots[i]!.label, at: moment(m.at, now, t.ended ? 'Never' : 'Not yet') }));
  if (t.ended) {
    dots.push({ label: statusWords(t.ended.status), state: 'ended' });
    rows.push({ label: statusWords(t.ended.status), at: moment(t.ended.at, now) });
  }
  const happened = rows.filter((r) => r.at.iso).map((r) => `${r.label.toLowerCase()} ${r.at.text}`);
  const waiting = rows.filter((r) => !r.at.iso).map((r) => r.label.toLowerCase());
  const summary = [`${happened.join(', ')}`, ...(waiting.length ? [`${t.ended ? 'never' : 'not yet'}: ${waiting.join(', ')}`] : [])].join('; ');
  return {
    chart: timelineChart({ id, title: 'Timeline of this order', summary: `${summary.charAt(0).toUpperCase()}${summary.slice(1)}.`, dots }),
    rows,
  };
}
