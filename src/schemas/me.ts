import { z } from 'zod';

const brandKit = z.object({
  id: z.number().int(),
  name: z.string(),
  website: z.string().nullable(),
  description: z.string().nullable(),
  tone: z.string().nullable(),
  default_anchor_texts: z.array(z.string()),
}).meta({ id: 'BrandKit' });

const budgetWindow = z
  .object({
    limit_cents: z.number().int().describe('The limit for the window, in US cents.'),
    spent_cents: z.number().int().describe('What the key (and the keys it was rolled from) placed in the window, less orders refunded before completion, in US cents.'),
    remaining_cents: z.number().int().describe('What the key may still place in the window, in US cents (never negative).'),
    resets_at: z.iso.datetime().describe('When the window starts again: the next UTC midnight, or the first of next month 00:00Z.'),
    limit_formatted: z.string(),
    spent_formatted: z.string(),
    remaining_formatted: z.string(),
  })
  .meta({ id: 'BudgetWindow' });

export const keyBudget = z
  .object({
    order_limit_cents: z.number().int().nullable().describe("One order's total may be at most this (US cents); null = no limit. Not the workspace's approval rule."),
    order_limit_formatted: z.string().nullable(),
    day: budgetWindow.nullable().describe('The UTC calendar day; null = no daily limit.'),
    month: budgetWindow.nullable().describe('The UTC calendar month; null = no monthly limit.'),
    expires_at: z.iso.datetime().nullable().describe('The key stops working (401) at this instant; null = never.'),
  })
  .meta({
    id: 'KeyBudget',
    description: 'What this key may still spend (docs/budgets.md). A placement over it answers 403 budget_exceeded and spends nothing. Read it before spending.',
  });

export const meData = z.object({
  workspace: z.object({
    id: z.number().int(),
    name: z.string(),
    currency: z.string().describe('ISO 4217 code; *_formatted strings use it.'),
    approval_rules: z.object({
      max_order_cents: z.number().int().nullable().describe('Orders above this total answer 403 approval_required; null = no limit.'),
      approval_above_cents: z.number().int().nullable().describe("A key's order above this total (US cents) waits for a person's approval in the console instead of being placed (docs/approvals.md); null = never."),
      auto_approve_drafts: z.boolean().describe('Publisher drafts skip buyer review.'),
    }),
  }),
  balance: z.number().int().describe('Available balance in US cents.'),
  balance_formatted: z.string(),
  held: z.number().int().describe('US cents held in escrow for open orders.'),
  held_formatted: z.string(),
  brand_kits: z.array(brandKit),
  key: z.object({
    id: z.number().int(),
    name: z.string(),
    prefix: z.string(),
    can_place_orders: z.boolean(),
    needs_approval: z.boolean().describe("Every order this key places and every placement it approves waits for a person's approval in the console (docs/approvals.md); false for a key that cannot spend."),
    abilities: z.array(z.enum(['read', 'plan', 'manage_content', 'place_orders', 'approve_placements', 'publish', 'manage_webhooks'])),
    budget: keyBudget.nullable().describe("The key's spending budget and expiry; null for a key without limits or expiry."),
  }),
}).meta({ id: 'Me', description: 'The workspace behind the key, its balance and what the key may do.' });

export const publisherMeData = z.object({
  publisher: z.object({ id: z.number().int(), name: z.string() }),
  pending: z.number().int().describe('US cents approved but still under the link guarantee: a lost link not restored is refunded from here.'),
  pending_formatted: z.string(),
  payable: z.number().int().describe('US cents owed to the publisher: the guarantee window ended with the link alive.'),
  payable_formatted: z.string(),
  in_payout: z.number().int().describe('US cents of payouts requested and not yet sent (docs/billing.md): out of payable, on their way to the publisher; a failed payout returns them to payable.'),
  in_payout_formatted: z.string(),
}).meta({ id: 'PublisherMe', description: 'The publisher behind the key and its balances.' });
