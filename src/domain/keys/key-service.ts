import { and, eq, isNull, sql } from 'drizzle-orm';
import { type Db, orm, withTransaction } from '../../db/handle.js';
import { apiKeys, publishers, workspaces } from '../../db/schema/index.js';
import { systemClock, type Clock } from '../clock.js';
import { DomainError, invalidInput, notFound } from '../errors.js';
import { refuseUnstorableText } from '../text-input.js';
import { generateRawKey, hashKey, visiblePrefix } from './key-format.js';

export type KeyOwner = { workspaceId: number; canPlaceOrders?: boolean } | { publisherId: number };

/** Whose keys: a workspace's or a publisher account's. */
export type KeyScope = { workspaceId: number } | { publisherId: number };

/** What needs_approval on a key that cannot spend is told. */
const NEEDS_APPROVAL_SPENDING = 'is for a spending key (one that can place orders)';

/**
 * Creates a key; the raw key is returned here and never again (only its hash is stored). With
 * `expiresAt` the key answers like a revoked one from then on.
 */
/**
 * `canManageWebhooks` (default true) is false for a key a console `member` makes (see abilities.ts).
 * `limits` is a spending key's budget (docs/budgets.md), in US cents. `needsApproval`: every
 * spending action of the key waits for a person's approval (docs/approvals.md). `createdBy`: the
 * console user who made it (removing them offers to revoke it; docs/people.md).
 */
export async function createKey(
  db: Db,
  owner: KeyOwner & { name?: string; expiresAt?: Date | null; canManageWebhooks?: boolean; limits?: BudgetLimits; needsApproval?: boolean; createdBy?: number },
  clock: Clock = systemClock,
) {
  refuseUnstorableText({ name: owner.name }, 'name');
  if (owner.expiresAt && !(owner.expiresAt.getTime() > clock.now())) throw invalidInput({ expires_at: ['must be in the future'] });
  const limits = owner.limits ?? {};
  checkLimits(limits);
  const spending = 'workspaceId' in owner && Boolean(owner.canPlaceOrders);
  if (Object.values(limits).some((v) => v !== null && v !== undefined) && !spending) {
    throw invalidInput({ limits: ['a budget is for a spending key (one that can place orders)'] });
  }
  // Refused rather than stored: on a key that cannot spend it would read as a safeguard it is not.
  if (owner.needsApproval && !spending) throw invalidInput({ needs_approval: [NEEDS_APPROVAL_SPENDING] });
  // The owner must exist: a key for a missing workspace or publisher is a 404, not a foreign-key error.
  if ('workspaceId' in owner) {
    const [w] = await orm(db).select({ id: workspaces.id }).from(workspaces).where(eq(workspaces.id, owner.workspaceId));
    if (!w) throw notFound('Workspace');
  } else {
    const [p] = await orm(db).select({ id: publishers.id }).from(publishers).where(eq(publishers.id, owner.publisherId));
    if (!p) throw notFound('Publisher');
  }
  const raw = generateRawKey();
  const canPlaceOrders = 'workspaceId' in owner ? Boolean(owner.canPlaceOrders) : false;
  const [row] = await orm(db)
    .insert(apiKeys)
    .values({
      workspaceId: 'workspaceId' in owner ? owner.workspaceId : null,
      publisherId: 'publisherId' in owner ? owner.publisherId : null,
      name: owner.name ?? (canPlaceOrders ? 'Spending key' : 'Read-only key'),
      prefix: visiblePrefix(raw),
      keyHash: hashKey(raw),
      canPlaceOrders,
      canManageWebhooks: owner.canManageWebhooks ?? true,
      needsApproval: Boolean(owner.needsApproval),
      expiresAt: owner.expiresAt ?? null,
      orderLimitCents: limits.orderLimitCents ?? null,
      dailyLimitCents: limits.dailyLimitCents ?? null,
      monthlyLimitCents: limits.monthlyLimitCents ?? null,
      createdByUserId: owner.createdBy ?? null,
    })
    .returning();
  return { id: row!.id, key: raw, prefix: row!.prefix, can_place_orders: row!.canPlaceOrders, needs_approval: row!.needsApproval };
}

/** A spending key's limits in US cents: null clears one, undefined leaves it as it is. */
export interface BudgetLimits {
  orderLimitCents?: number | null | undefined;
  dailyLimitCents?: number | null | undefined;
  monthlyLimitCents?: number | null | undefined;
}

const limitFields = { orderLimitCents: 'order_limit_cents', dailyLimitCents: 'daily_limit_cents', monthlyLimitCents: 'monthly_limit_cents' } as const;

/** The most a limit may be: $10,000,000.00, far below what a bigint or a float holds exactly. */
const MAX_LIMIT_CENTS = 1_000_000_000;

export function checkLimits(limits: BudgetLimits) {
  const errors: Record<string, string[]> = {};
  for (const [k, field] of Object.entries(limitFields)) {
    const v = limits[k as keyof BudgetLimits];
    if (v !== null && v !== undefined && !(Number.isInteger(v) && v >= 0 && v <= MAX_LIMIT_CENTS)) {
      errors[field] = [`must be a whole number of cents from 0 to ${MAX_LIMIT_CENTS}`];
    }
  }
  if (Object.keys(errors).length) throw invalidInput(errors);
}

/**
 * Changes a spending key's budget, expiry and approval flag (admin CLI `key update`, the console's
 * key page). A limit is the budget's, so it changes on every key of the key's rolled chain; so does
 * `needsApproval`, since a key rolled from it may still work in its grace and must not spend
 * without the approval the new one waits for. The expiry is this key's own. A limit lowered below
 * what was spent leaves nothing to spend. With `scope` (the console), a key of another workspace or
 * publisher is "not found"; the CLI changes any key by id.
 */
export async function updateKey(
  db: Db,
  id: number,
  changes: BudgetLimits & { expiresAt?: Date | null | undefined; needsApproval?: boolean | undefined },
  clock: Clock = systemClock,
  scope?: KeyScope,
) {
  const { expiresAt, needsApproval, ...limits } = changes;
  checkLimits(limits);
  if (expiresAt && !(expiresAt.getTime() > clock.now())) throw invalidInput({ expires_at: ['must be in the future'] });
  const set: Partial<typeof apiKeys.$inferInsert> = Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined));
  const budgetChanged = Object.keys(set).length > 0;
  if (!budgetChanged && expiresAt === undefined && needsApproval === undefined) {
    throw invalidInput({ key: ['nothing to change: give a limit, an expiry or whether orders need approval'] });
  }
  return withTransaction(db, async (tx) => {
    const t = orm(tx);
    const where = scope ? and(eq(apiKeys.id, id), scopeCondition(scope)) : eq(apiKeys.id, id);
    const [key] = await t.select().from(apiKeys).where(where).for('update');
    if (!key) throw notFound('Key');
    if (budgetChanged && !key.canPlaceOrders) throw invalidInput({ limits: ['a budget is for a spending key (one that can place orders)'] });
    if (needsApproval && !key.canPlaceOrders) throw invalidInput({ needs_approval: [NEEDS_APPROVAL_SPENDING] });
    if (needsApproval !== undefined) set.needsApproval = needsApproval;
    if (Object.keys(set).length > 0) {
      const budgetId = key.budgetKeyId ?? key.id;
      await t
        .update(apiKeys)
        .set(set)
        .where(sql`${apiKeys.id} = ${budgetId} OR ${apiKeys.budgetKeyId} = ${budgetId}`);
    }
    if (expiresAt !== undefined) await t.update(apiKeys).set({ expiresAt }).where(eq(apiKeys.id, id));
    const [row] = await t.select().from(apiKeys).where(eq(apiKeys.id, id));
    return {
      id,
      order_limit_cents: row!.orderLimitCents,
      daily_limit_cents: row!.dailyLimitCents,
      monthly_limit_cents: row!.monthlyLimitCents,
      expires_at: row!.expiresAt,
      needs_approval: row!.needsApproval,
    };
  });
}

const scopeCondition = (scope: KeyScope) =>
  'workspaceId' in scope ? eq(apiKeys.workspaceId, scope.workspaceId) : eq(apiKeys.publisherId, scope.publisherId);

/**
 * Revokes a key. With `scope` (the console), a key of another workspace or publisher is "not
 * found", as if it did not exist; the admin CLI revokes any key by id.
 */
export async function revokeKey(db: Db, id: number, scope?: KeyScope) {
  const where = scope ? and(eq(apiKeys.id, id), scopeCondition(scope)) : eq(apiKeys.id, id);
  const [row] = await orm(db)
    .update(apiKeys)
    .set({ revokedAt: new Date() })
    .where(and(where, isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id });
  if (!row) {
    const [exists] = await orm(db).select({ id: apiKeys.id }).from(apiKeys).where(where);
    if (!exists) throw notFound('Key');
  }
  return { id, revoked: true as const };
}

/** The keys a person made (or rolled) in the console that still work: what removing them offers to revoke. */
export async function listKeysMadeBy(db: Db, scope: KeyScope, userId: number, clock: Clock = systemClock): Promise<KeyListing[]> {
  const now = clock.now();
  const rows = await orm(db)
    .select()
    .from(apiKeys)
    .where(
      and(
        scopeCondition(scope),
        eq(apiKeys.createdByUserId, userId),
        isNull(apiKeys.oauthGrantId),
        isNull(apiKeys.revokedAt),
        sql`(${apiKeys.expiresAt} IS NULL OR ${apiKeys.expiresAt} > ${new Date(now)})`,
      ),
    )
    .orderBy(sql`${apiKeys.createdAt} DESC, ${apiKeys.id} DESC`);
  return rows.map((k) => keyListing(k, now));
}

/**
 * Revokes every key a person made (or rolled) in the workspace or publisher: they were removed
 * and the remover chose so. Like any revocation, it reaches every process within 5 s (the key
 * cache). Answers how many were revoked.
 */
export async function revokeKeysMadeBy(db: Db, scope: KeyScope, userId: number, clock: Clock = systemClock): Promise<number> {
  const rows = await orm(db)
    .update(apiKeys)
    .set({ revokedAt: new Date(clock.now()) })
    .where(and(scopeCondition(scope), eq(apiKeys.createdByUserId, userId), isNull(apiKeys.oauthGrantId), isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id });
  return rows.length;
}

/** A key about to stop working shows as `expiring` this long before its expiry. */
export const EXPIRING_WITHIN_MS = 7 * 86_400_000;

export type KeyState = 'active' | 'expiring' | 'expired' | 'revoked';

export interface KeyListing {
  id: number;
  name: string;
  prefix: string;
  can_place_orders: boolean;
  can_manage_webhooks: boolean;
  needs_approval: boolean;
  created_at: Date;
  last_used_at: Date | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  state: KeyState;
  /** A spending key's budget (docs/budgets.md), US cents; null where it has no such limit (always, on a key that cannot spend). */
  order_limit_cents: number | null;
  daily_limit_cents: number | null;
  monthly_limit_cents: number | null;
}

export function keyState(key: { revokedAt: Date | null; expiresAt: Date | null }, now: number): KeyState {
  if (key.revokedAt) return 'revoked';
  if (key.expiresAt && key.expiresAt.getTime() <= now) return 'expired';
  if (key.expiresAt && key.expiresAt.getTime() - now <= EXPIRING_WITHIN_MS) return 'expiring';
  return 'active';
}

/** Every key of a workspace or publisher, newest first, for the console's API keys page. */
export async function listKeys(db: Db, scope: KeyScope, clock: Clock = systemClock): Promise<KeyListing[]> {
  // An OAuth grant's row is listed under Connected apps, not with the keys (docs/oauth.md).
  const rows = await orm(db).select().from(apiKeys).where(and(scopeCondition(scope), isNull(apiKeys.oauthGrantId))).orderBy(sql`${apiKeys.createdAt} DESC, ${apiKeys.id} DESC`);
  const now = clock.now();
  return rows.map((k) => keyListing(k, now));
}

/** One key as the console lists it. */
export function keyListing(k: typeof apiKeys.$inferSelect, now: number): KeyListing {
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    can_place_orders: k.canPlaceOrders,
    can_manage_webhooks: k.canManageWebhooks,
    needs_approval: k.needsApproval,
    created_at: k.createdAt,
    last_used_at: k.lastUsedAt,
    expires_at: k.expiresAt,
    revoked_at: k.revokedAt,
    state: keyState(k, now),
    order_limit_cents: k.orderLimitCents,
    daily_limit_cents: k.dailyLimitCents,
    monthly_limit_cents: k.monthlyLimitCents,
  };
}

/** One key of a workspace or publisher; a key of another, or an OAuth grant's row (Connected apps), is "not found". */
export async function findKey(db: Db, scope: KeyScope, id: number) {
  const [row] = await orm(db).select().from(apiKeys).where(and(eq(apiKeys.id, id), scopeCondition(scope), isNull(apiKeys.oauthGrantId)));
  if (!row) throw notFound('Key');
  return row;
}

export const MAX_ROLL_GRACE_HOURS = 72;

/**
 * Rolls a key: a new key with the same name and abilities (shown once), while the old one keeps
 * working for `graceHours` (0–72) and then answers like a revoked key. An old key that already
 * expires sooner keeps its earlier expiry. The new key is `by`'s (the console user who rolled it,
 * to whom it is shown), whoever made the old one.
 */
export async function rollKey(db: Db, scope: KeyScope, keyId: number, graceHours: number, clock: Clock = systemClock, by?: number) {
  if (!Number.isInteger(graceHours) || graceHours < 0 || graceHours > MAX_ROLL_GRACE_HOURS) {
    throw invalidInput({ grace_hours: [`must be a whole number of hours from 0 to ${MAX_ROLL_GRACE_HOURS}`] });
  }
  const now = clock.now();
  const { column, id: scopeId } = 'workspaceId' in scope ? ({ column: 'workspace_id', id: scope.workspaceId } as const) : ({ column: 'publisher_id', id: scope.publisherId } as const);
  const raw = generateRawKey();
  return withTransaction(db, async (tx) => {
    const { rows } = await tx.query<{ name: string; can_place_orders: boolean; can_manage_webhooks: boolean; revoked_at: Date | null; expires_at: Date | null }>(
      `SELECT name, can_place_orders, can_manage_webhooks, revoked_at, expires_at FROM api_keys WHERE id = $1 AND ${column} = $2 AND oauth_grant_id IS NULL FOR UPDATE`,
      [keyId, scopeId],
    );
    const old = rows[0];
    if (!old) throw notFound('Key');
    if (old.revoked_at || (old.expires_at && old.expires_at.getTime() <= now)) {
      throw new DomainError('conflict', 'This key no longer works (revoked or expired): create a new key instead.', { reason: 'key_inactive' });
    }
    const oldExpiry = Math.min(now + graceHours * 3_600_000, old.expires_at?.getTime() ?? Infinity);
    await tx.query('UPDATE api_keys SET expires_at = to_timestamp($2::double precision / 1000) WHERE id = $1', [keyId, oldExpiry]);
    const { rows: created } = await tx.query<{ id: number; prefix: string }>(
      // The new key keeps the budget and what was spent: it copies the limits and shares the
      // chain's budget id (docs/budgets.md). It keeps needs_approval too: a roll must not lift it.
      `INSERT INTO api_keys (${column}, name, prefix, key_hash, can_place_orders, can_manage_webhooks, needs_approval,
                             order_limit_cents, daily_limit_cents, monthly_limit_cents, budget_key_id, created_by_user_id)
       SELECT $1, name, $2, $3, can_place_orders, can_manage_webhooks, needs_approval,
              order_limit_cents, daily_limit_cents, monthly_limit_cents, COALESCE(budget_key_id, id), $5::int
         FROM api_keys WHERE id = $4
       RETURNING id, prefix`,
      [scopeId, visiblePrefix(raw), hashKey(raw), keyId, by ?? null],
    );
    return {
      id: created[0]!.id,
      key: raw,
      prefix: created[0]!.prefix,
      can_place_orders: old.can_place_orders,
      rolled: { id: keyId, expires_at: new Date(oldExpiry) },
    };
  });
}
