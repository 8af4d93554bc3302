import { bigint, boolean, char, index, jsonb, pgTable, serial, text, timestamp } from 'drizzle-orm/pg-core';
import { fxRates } from './fx.js';

export const workspaces = pgTable(
  'workspaces',
  {
    id: serial('id').primaryKey(),
    name: text('name').notNull(),
    currency: char('currency', { length: 3 })
      .notNull()
      .default('USD')
      .references(() => fxRates.currency),
    // Approval rules (docs/orders.md). null = no limit.
    maxOrderCents: bigint('max_order_cents', { mode: 'number' }),
    // Orders of a key above this total wait for a person's approval (docs/approvals.md). null = never.
    approvalAboveCents: bigint('approval_above_cents', { mode: 'number' }),
    autoApproveDrafts: boolean('auto_approve_drafts').notNull().default(false),
    // Owner profile, shown by the seller API's account details.
    ownerFirstName: text('owner_first_name').notNull(),
    ownerLastName: text('owner_last_name').notNull(),
    username: text('username').notNull(),
    email: text('email').notNull(),
    profileHeading: text('profile_heading').notNull().default(''),
    profileDescription: text('profile_description').notNull().default(''),
    contactEmail: text('contact_email').notNull(),
    socialLinks: jsonb('social_links').$type<Record<string, string>>().notNull().default({}),
    avatarUrl: text('avatar_url').notNull().default(''),
    coverUrl: text('cover_url').notNull().default(''),
    registeredAt: timestamp('registered_at', { withTimezone: true }).notNull().defaultNow(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('workspaces_currency_idx').on(t.currency)],
);
