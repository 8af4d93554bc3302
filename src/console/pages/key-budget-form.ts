import type { z } from 'zod';
import { DomainError, type FieldErrors, invalidInput } from '../../domain/errors.js';
import type { KeyDetail, WindowDetail } from '../../domain/keys/key-detail.js';
import type { BudgetLimits } from '../../domain/keys/key-service.js';
import { formatCents } from '../../domain/money/format.js';
import { expiryDate, usdLimit } from '../../schemas/key-budget.js';
import { type Form, formText } from '../form.js';
import { moment } from '../format.js';

// A spending key's budget and expiry in the console's forms (the key form and the key page;
// docs/budgets.md). The fields are read by the same zod schemas as the admin CLI's flags; the
// rules (limits only on a spending key, an expiry in the future, the limits' range) are the
// domain's createKey and updateKey, whose errors are named here by the form's fields.

const text = (form: Form, name: string) => formText(form, name).trim();

/** The form's limit fields and the domain's names for them. */
export const LIMIT_FIELDS = [
  { field: 'order_limit_usd', domain: 'order_limit_cents', limit: 'orderLimitCents' },
  { field: 'daily_limit_usd', domain: 'daily_limit_cents', limit: 'dailyLimitCents' },
  { field: 'monthly_limit_usd', domain: 'monthly_limit_cents', limit: 'monthlyLimitCents' },
] as const;

export type BudgetFormValues = Record<'order_limit_usd' | 'daily_limit_usd' | 'monthly_limit_usd' | 'expires_on', string>;

export function budgetFormValues(form: Form): BudgetFormValues {
  return {
    order_limit_usd: text(form, 'order_limit_usd'),
    daily_limit_usd: text(form, 'daily_limit_usd'),
    monthly_limit_usd: text(form, 'monthly_limit_usd'),
    expires_on: text(form, 'expires_on'),
  };
}

const first = (error: z.ZodError) => [error.issues[0]!.message];

/**
 * The form's limits (cents; an empty field is null, "no limit") and expiry (00:00:00Z of the date;
 * empty is null). `limitsAsked: false` (a key without a budget form) leaves empty limits undefined,
 * so only a limit actually written reaches the domain, which refuses it on a key that cannot spend.
 * Bad fields throw invalid_input named by the form's fields.
 */
export function readBudgetForm(values: BudgetFormValues, opts: { limitsAsked: boolean }): { limits: BudgetLimits; expiresAt: Date | null } {
  const errors: FieldErrors = {};
  const limits: BudgetLimits = {};
  for (const { field, limit } of LIMIT_FIELDS) {
    const raw = values[field];
    if (raw === '') {
      if (opts.limitsAsked) limits[limit] = null;
      continue;
    }
    const parsed = usdLimit.safeParse(raw);
    if (parsed.success) limits[limit] = parsed.data;
    else errors[field] = first(parsed.error);
  }
  let expiresAt: Date | null = null;
  if (values.expires_on !== '') {
    const parsed = expiryDate.safeParse(values.expires_on);
    if (parsed.success) expiresAt = parsed.data;
    else errors.expires_on = first(parsed.error);
  }
  if (Object.keys(errors).length) throw invalidInput(errors);
  return { limits, expiresAt };
}

/**
 * A domain `invalid_input` from createKey or updateKey, its fields named as the form names them;
 * undefined for any other error. `limits` (a budget on a key that cannot spend) goes to each limit
 * that was written.
 */
export function formErrors(err: unknown, values: BudgetFormValues): FieldErrors | undefined {
  if (!(err instanceof DomainError) || err.code !== 'invalid_input') return undefined;
  const given = (err.details.errors ?? {}) as FieldErrors;
  const errors: FieldErrors = {};
  for (const [name, messages] of Object.entries(given)) {
    const limit = LIMIT_FIELDS.find((f) => f.domain === name);
    if (limit) errors[limit.field] = messages;
    else if (name === 'expires_at') errors.expires_on = messages;
    else if (name === 'limits') {
      const written = LIMIT_FIELDS.filter((f) => values[f.field] !== '');
      for (const f of written.length ? written : LIMIT_FIELDS) errors[f.field] = ['must be empty: a budget is only for a key that can place orders'];
    } else errors[name] = messages;
  }
  return errors;
}

export const hasBudgetErrors = (errors: FieldErrors | undefined) => Boolean(errors && LIMIT_FIELDS.some((f) => errors[f.field]));

const usd = (cents: number) => formatCents(cents, 'USD', 1);
/** Cents as the form shows them again: "500.00", or empty for no limit. */
export const asDollars = (cents: number | null) => (cents === null ? '' : (cents / 100).toFixed(2));
/** An instant as a date field shows it (the UTC day). */
export const asDate = (d: Date | null) => (d ? d.toISOString().slice(0, 10) : '');

/**
 * A key's budget in one line, for the keys list and the page that shows a new key:
 * "$200.00 per order, $500.00 a day, $5,000.00 a month", "No limit" for a spending key without
 * one, and "Cannot spend" for a key that cannot place orders (it has no budget).
 */
export function budgetSummary(key: { can_place_orders: boolean; order_limit_cents: number | null; daily_limit_cents: number | null; monthly_limit_cents: number | null }): string {
  if (!key.can_place_orders) return 'Cannot spend';
  const parts = [
    key.order_limit_cents !== null && `${usd(key.order_limit_cents)} per order`,
    key.daily_limit_cents !== null && `${usd(key.daily_limit_cents)} a day`,
    key.monthly_limit_cents !== null && `${usd(key.monthly_limit_cents)} a month`,
  ].filter(Boolean);
  return parts.length ? parts.join(', ') : 'No limit';
}

/** The key page's budget table: each window's limit, spent, remaining and reset, in US dollars. */
export function budgetRows(budget: NonNullable<KeyDetail['budget']>, now: number) {
  const row = (label: string, w: WindowDetail) => ({
    label,
    limit: w.limit_cents === null ? 'No limit' : usd(w.limit_cents),
    spent: usd(w.spent_cents),
    remaining: w.remaining_cents === null ? '—' : usd(w.remaining_cents),
    resets: moment(w.resets_at, now),
  });
  return [
    { label: 'Per order', limit: budget.order_limit_cents === null ? 'No limit' : usd(budget.order_limit_cents), spent: '—', remaining: '—', resets: moment(null, now, '—') },
    row('Today (UTC day)', budget.day),
    row('This month (UTC)', budget.month),
  ];
}
