import { sql } from 'drizzle-orm';
import { bigserial, boolean, check, index, integer, jsonb, pgEnum, pgTable, serial, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { memberRoles, userTokenPurposes } from '../../common/enums.js';
import { publishers } from './publishers.js';
import { workspaces } from './workspaces.js';

export const memberRole = pgEnum('member_role', memberRoles);

const oneTarget = (workspaceId: unknown, publisherId: unknown) => sql`(${workspaceId} IS NULL) <> (${publisherId} IS NULL)`;

/** People who sign in to the console. The email is unique whatever its case. */
export const users = pgTable(
  'users',
  {
    id: serial('id').primaryKey(),
    email: text('email').notNull(),
    name: text('name').notNull(),
    /** argon2id, in the PHC string format (parameters and salt included). */
    passwordHash: text('password_hash').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    lastSignInAt: timestamp('last_sign_in_at', { withTimezone: true }),
    /**
     * When the person proved the address is theirs (a link mailed to it, docs/mail.md); null until
     * then. Users made by the CLI, and those who existed before the column, count as proven.
     */
    emailVerifiedAt: timestamp('email_verified_at', { withTimezone: true }),
    /**
     * The operator's own people (docs/billing.md): they see the operations console (top-ups to
     * confirm, adjustments), and are members of no workspace by being staff. Set by the CLI only.
     */
    isStaff: boolean('is_staff').notNull().default(false),
  },
  (t) => [uniqueIndex('users_email_lower_key').on(sql`lower(${t.email})`)],
);

export const userTokenPurpose = pgEnum('user_token_purpose', userTokenPurposes);

/**
 * Single-use links mailed to a person: confirming the address, or setting a new password. Only
 * the SHA-256 of the token is kept, as for invitations; `email` is the address it was mailed to,
 * the one the link proves.
 */
export const userTokens = pgTable(
  'user_tokens',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    purpose: userTokenPurpose('purpose').notNull(),
    tokenHash: text('token_hash').notNull().unique(),
    email: text('email').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    usedAt: timestamp('used_at', { withTimezone: true }),
  },
  (t) => [index('user_tokens_user_idx').on(t.userId, t.purpose), index('user_tokens_expires_idx').on(t.expiresAt)],
);

/** A user's role in exactly one workspace or one publisher account. */
export const memberships = pgTable(
  'memberships',
  {
    id: serial('id').primaryKey(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    workspaceId: integer('workspace_id').references(() => workspaces.id),
    publisherId: integer('publisher_id').references(() => publishers.id),
    role: memberRole('role').notNull(),
    /**
     * The person's notification settings here (docs/mail.md): kind → `now`, `digest` or `off`.
     * A kind not in it takes the role's default, so a role changed later changes the defaults.
     */
    notifications: jsonb('notifications').$type<Record<string, string>>().notNull().default({}),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    // NULLs are distinct, so each index only constrains the rows of its own kind of target.
    uniqueIndex('memberships_user_workspace_key').on(t.userId, t.workspaceId),
    uniqueIndex('memberships_user_publisher_key').on(t.userId, t.publisherId),
    index('memberships_workspace_idx').on(t.workspaceId),
    index('memberships_publisher_idx').on(t.publisherId),
    check('memberships_one_target', oneTarget(t.workspaceId, t.publisherId)),
  ],
);

/** An invitation to join a workspace or publisher account; only the SHA-256 of its token is kept. */
export const invitations = pgTable(
  'invitations',
  {
    id: serial('id').primaryKey(),
    tokenHash: text('token_hash').notNull().unique(),
    email: text('email').notNull(),
    workspaceId: integer('workspace_id').references(() => workspaces.id),
    publisherId: integer('publisher_id').references(() => publishers.id),
    role: memberRole('role').notNull(),
    invitedBy: integer('invited_by')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    acceptedAt: timestamp('accepted_at', { withTimezone: true }),
    acceptedBy: integer('accepted_by').references(() => users.id, { onDelete: 'set null' }),
  },
  (t) => [
    index('invitations_workspace_idx').on(t.workspaceId),
    index('invitations_publisher_idx').on(t.publisherId),
    index('invitations_invited_by_idx').on(t.invitedBy),
    index('invitations_accepted_by_idx').on(t.acceptedBy),
    check('invitations_one_target', oneTarget(t.workspaceId, t.publisherId)),
  ],
);

/**
 * Console sessions. Only the SHA-256 of the session id (the cookie's value) is kept; `data` is the
 * session store's payload (the CSRF secret, the chosen workspace…).
 */
export const sessions = pgTable(
  'sessions',
  {
    idHash: text('id_hash').primaryKey(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    data: jsonb('data').$type<Record<string, unknown>>().notNull().default({}),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    lastSeenAt: timestamp('last_seen_at', { withTimezone: true }).notNull().defaultNow(),
    /** The absolute end (30 days after sign-in); the idle end is last_seen_at + 12 h. */
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [index('sessions_user_idx').on(t.userId), index('sessions_expires_idx').on(t.expiresAt)],
);
