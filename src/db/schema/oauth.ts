import { index, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * What the OAuth authorization server (oidc-provider, docs/oauth.md) stores: its clients, grants,
 * interactions, sessions, codes and tokens, one row per model instance, the payload as the
 * library gives it. The ids of codes and tokens are stored as their SHA-256, never as given.
 */
export const oauthRecords = pgTable(
  'oauth_records',
  {
    model: text('model').notNull(),
    id: text('id').notNull(),
    payload: jsonb('payload').notNull(),
    grantId: text('grant_id'),
    uid: text('uid'),
    userCode: text('user_code'),
    /** null = kept until deleted (registered clients). */
    expiresAt: timestamp('expires_at', { withTimezone: true }),
  },
  (t) => [
    primaryKey({ columns: [t.model, t.id] }),
    index('oauth_records_grant_idx').on(t.grantId),
    index('oauth_records_uid_idx').on(t.model, t.uid),
    index('oauth_records_expires_idx').on(t.expiresAt),
  ],
);
