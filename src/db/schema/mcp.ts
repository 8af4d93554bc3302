import { index, integer, json, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { apiKeys } from './api-keys.js';

/**
 * Confirmation tokens of two-step MCP spending that were acted on. The row is written in the
 * same transaction as the spending, so a token spends at most once; its stored result answers a
 * repeat of the same call (`replayed: true`).
 */
export const mcpConfirmations = pgTable(
  'mcp_confirmations',
  {
    tokenId: text('token_id').primaryKey(),
    apiKeyId: integer('api_key_id')
      .notNull()
      .references(() => apiKeys.id),
    tool: text('tool').notNull(),
    argumentsHash: text('arguments_hash').notNull(),
    // The domain's outcome, as for idempotency_records; json, not jsonb: a replay reads back the
    // keys in the order the first call wrote them.
    outcome: json('outcome').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  },
  (t) => [index('mcp_confirmations_key_idx').on(t.apiKeyId)],
);
