import { pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/** Secrets generated once and shared by every process (e.g. the MCP confirmation-token key). */
export const appSecrets = pgTable('app_secrets', {
  name: text('name').primaryKey(),
  value: text('value').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});
