import { sql } from 'drizzle-orm';
import { boolean, check, index, integer, pgTable, serial, text, timestamp } from 'drizzle-orm/pg-core';
import { publishers } from './publishers.js';
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
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    /** After this the key answers like a revoked one (a rolled key's grace, a chosen expiry). null = never. */
    expiresAt: timestamp('expires_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('api_keys_workspace_idx').on(t.workspaceId),
    index('api_keys_publisher_idx').on(t.publisherId),
    check('api_keys_one_owner', sql`(${t.workspaceId} IS NULL) <> (${t.publisherId} IS NULL)`),
    check('api_keys_publisher_cannot_spend', sql`${t.publisherId} IS NULL OR NOT ${t.canPlaceOrders}`),
  ],
);
