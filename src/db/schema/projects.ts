import { index, integer, pgTable, serial, text, timestamp } from 'drizzle-orm/pg-core';
import { workspaces } from './workspaces.js';

export const projects = pgTable(
  'projects',
  {
    id: serial('id').primaryKey(),
    workspaceId: integer('workspace_id')
      .notNull()
      .references(() => workspaces.id),
    name: text('name').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('projects_workspace_idx').on(t.workspaceId)],
);
