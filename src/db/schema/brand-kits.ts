import { index, integer, pgTable, serial, text, timestamp } from 'drizzle-orm/pg-core';
import { workspaces } from './workspaces.js';

export const brandKits = pgTable(
  'brand_kits',
  {
    id: serial('id').primaryKey(),
    workspaceId: integer('workspace_id')
      .notNull()
      .references(() => workspaces.id),
    name: text('name').notNull(),
    website: text('website'),
    description: text('description'),
    tone: text('tone'),
    defaultAnchorTexts: text('default_anchor_texts').array().notNull().default([]),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('brand_kits_workspace_idx').on(t.workspaceId)],
);
