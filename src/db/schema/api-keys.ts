import { sql } from 'drizzle-orm';
import { bigint, boolean, check, index, integer, pgTable, serial, text, timestamp } from 'drizzle-orm/pg-core';
import { publishers } from './publishers.js';
import { users } from './users.js';
import { workspaces } from './workspaces.js';

/** Only the SHA-256 of a key is stored; the raw key is shown once at creation. */
export const apiKeys = pgTable(
  'api_keys',
  {
    id: serial('id').primaryKey(),
    workspaceId: integer('workspace_id').references(() => workspaces.id),
    publisherId: integer('publisher_id').references(() => publishers.id),
    name: text('name').notNull(),
    prefix: text('prefix').notNull(),
    keyHash: text('key_hash').notNull().unique(),
    canPlaceOrders: boolean('can_place_orders').notNull().default(false),
    /** Webhook endpoints may be created, deleted, rotated and resent with it: false for a key a console `member` made. */
    canManageWebhooks: boolean('can_manage_webhooks').notNull().default(true),
    /** Every spending action of this key waits for a person's approval (docs/approvals.md). */
    needsApproval: boolean('needs_approval').notNull().default(false),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    /** After this the key answers like a revoked one (a rolled key's grace, a chosen expiry). null = never. */
    expiresAt: timestamp('expires_at', { withTimezone: true }),
    /** Spending budget (docs/budgets.md), in US cents; null = no limit. One order's total. */
    orderLimitCents: bigint('order_limit_cents', { mode: 'number' }),
    /** What the key may place per UTC calendar day / month, refunds given back. */
    dailyLimitCents: bigint('daily_limit_cents', { mode: 'number' }),
    monthlyLimitCents: bigint('monthly_limit_cents', { mode: 'number' }),
    /**
     * The key whose budget this one shares: a rolled key points at the first key of its chain, so
     * what the chain spent counts against it. null = the key's own id.
     */
    budgetKeyId: integer('budget_key_id'),
    /** When the budget's day / month last ran out (on the chain's first key): `key.budget_exhausted` goes once per window. */
    budgetDayExhaustedAt: timestamp('budget_day_exhausted_at', { withTimezone: true }),
    budgetMonthExhaustedAt: timestamp('budget_month_exhausted_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    /**
     * Set on the row a person's OAuth consent made (docs/oauth.md): the grant of the OAuth server
     * it stands for. Such a row is never a bearer key (its key_hash is no key's hash); it carries
     * the grant's workspace, abilities and budget, and is revoked with the grant.
     */
    oauthGrantId: text('oauth_grant_id').unique(),
    /** The OAuth client of that grant (a registered id, or the URL of its metadata document). */
    oauthClientId: text('oauth_client_id'),
    /** The person whose consent made it (console users). */
    oauthUserId: integer('oauth_user_id').references(() => users.id),
    /**
     * The person who made the key in the console (or rolled it: the new key was shown to them);
     * null for the CLI's and for keys made before this was recorded. The key is the workspace's
     * or publisher's all the same; removing the person offers to revoke it (docs/people.md).
     */
    createdByUserId: integer('created_by_user_id').references(() => users.id),
  },
  (t) => [
    index('api_keys_workspace_idx').on(t.workspaceId),
    index('api_keys_publisher_idx').on(t.publisherId),
    // The sweep that mails "a key expiring within 7 days" reads only live keys with an expiry.
    index('api_keys_expires_idx').on(t.expiresAt).where(sql`${t.expiresAt} IS NOT NULL AND ${t.revokedAt} IS NULL`),
    index('api_keys_budget_idx').on(t.budgetKeyId).where(sql`${t.budgetKeyId} IS NOT NULL`),
    check(
      'api_keys_limits',
      sql`(${t.orderLimitCents} IS NULL OR ${t.orderLimitCents} >= 0) AND (${t.dailyLimitCents} IS NULL OR ${t.dailyLimitCents} >= 0) AND (${t.monthlyLimitCents} IS NULL OR ${t.monthlyLimitCents} >= 0)`,
    ),
    check('api_keys_one_owner', sql`(${t.workspaceId} IS NULL) <> (${t.publisherId} IS NULL)`),
    check('api_keys_publisher_cannot_spend', sql`${t.publisherId} IS NULL OR NOT ${t.canPlaceOrders}`),
  ],
);
