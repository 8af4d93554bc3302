import { type Db, withTransaction } from '../../db/handle.js';
import type { Clock } from '../clock.js';
import { forbidden, invalidInput, notFound } from '../errors.js';
import { SPENDING_ABILITIES } from '../keys/abilities.js';
import { type BudgetLimits, checkLimits, keyState, type KeyState } from '../keys/key-service.js';
import type { Principal } from '../keys/principal.js';
import { roleIn } from '../users/memberships.js';
import { can } from '../users/permissions.js';

/** What a person allowed on the consent page (docs/oauth.md). */
export interface GrantTerms {
  grantId: string;
  clientId: string;
  clientName: string;
  userId: number;
  workspaceId: number;
  canPlaceOrders: boolean;
  /** Every spending action of the app waits for a person's approval (docs/approvals.md). */
  needsApproval: boolean;
  limits: BudgetLimits;
  expiresAt: Date | null;
}

/** The prefix every grant shows where a key shows its visible prefix (get-balance's `key.prefix`). */
export const GRANT_PREFIX = 'oauth';

/**
 * Whether this person may connect an app to the workspace, and with spending: the same rule as
 * making a key in the console (a read-only key for members and owners, a spending one for owners).
 */
export async function mayGrant(db: Db, userId: number, workspaceId: number, spending: boolean): Promise<boolean> {
  const role = await roleIn(db, userId, { workspaceId });
  return can(role, spending ? 'manage_spending_keys' : 'manage_read_only_keys');
}

/**
 * Records a consent as the principal the API already understands: an `api_keys` row for the
 * grant, with its workspace, abilities, budget and expiry. Its key_hash is no key's hash (keys
 * hash to 64 hex digits), so the row is never a bearer key; the resolver finds it only by grant.
 */
export async function recordGrant(db: Db, terms: GrantTerms, clock: Clock): Promise<{ keyId: number }> {
  checkLimits(terms.limits);
  const limited = Object.values(terms.limits).some((v) => v !== null && v !== undefined);
  if (limited && !terms.canPlaceOrders) throw invalidInput({ limits: ['a budget is for an app that may place orders'] });
  if (terms.needsApproval && !terms.canPlaceOrders) throw invalidInput({ needs_approval: ['is for an app that may place orders'] });
  if (terms.expiresAt && !(terms.expiresAt.getTime() > clock.now())) throw invalidInput({ expires_at: ['must be in the future'] });
  const role = await roleIn(db, terms.userId, { workspaceId: terms.workspaceId });
  if (!role) throw notFound('Workspace');
  if (!can(role, terms.canPlaceOrders ? 'manage_spending_keys' : 'manage_read_only_keys')) {
    throw forbidden(terms.canPlaceOrders ? 'Only an owner may let an app place orders.' : 'Your role cannot connect apps to this workspace.');
  }
  const { rows } = await db.query<{ id: number }>(
    `INSERT INTO api_keys (workspace_id, name, prefix, key_hash, can_place_orders, can_manage_webhooks, expires_at,
                           order_limit_cents, daily_limit_cents, monthly_limit_cents, oauth_grant_id, oauth_client_id, oauth_user_id,
                           needs_approval)
     VALUES ($1, $2, $3, $4, $5, false, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING id`,
    [
      terms.workspaceId,
      terms.clientName,
      GRANT_PREFIX,
      `oauth:${terms.grantId}`,
      terms.canPlaceOrders,
      terms.expiresAt,
      terms.limits.orderLimitCents ?? null,
      terms.limits.dailyLimitCents ?? null,
      terms.limits.monthlyLimitCents ?? null,
      terms.grantId,
      terms.clientId,
      terms.userId,
      terms.needsApproval,
    ],
  );
  return { keyId: rows[0]!.id };
}

/**
 * What one access token may do: its grant's principal within the token's own scope. A client may
 * ask a narrower scope than its grant when it refreshes (`scope=read`), and such a token must not
 * spend though the grant may. `read` is every tool but spending and `spend` adds spending
 * (docs/oauth.md), so a token without `spend` loses the spending abilities, and one naming neither
 * stands for nothing here.
 */
export function withinTokenScope<P extends Principal>(principal: P, scope: string): P | null {
  const scopes = scope.split(' ');
  if (scopes.includes('spend')) return principal;
  if (!scopes.includes('read')) return null;
  return { ...principal, canPlaceOrders: false, abilities: principal.abilities.filter((a) => !SPENDING_ABILITIES.includes(a)) };
}

/**
 * Claims the one answer of an authorization request (its interaction, by uid): true for the first
 * Allow or Deny, false once one was given or is being given. A second Allow (a double click, or
 * Back and Allow again) must not record a second grant: only the last answer would get tokens,
 * and the first grant would stay listed as live, unused. The claim is a mark on the interaction's
 * row, taken in one statement, so two answers at once on two processes get one claim between
 * them; the library drops the mark when it saves the answer, whose `result` then says the same.
 */
export async function claimAnswer(db: Db, uid: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE oauth_records SET payload = payload || '{"answering": true}'
      WHERE model = 'Interaction' AND id = $1 AND NOT payload ? 'answering' AND NOT payload ? 'result'`,
    [uid],
  );
  return rowCount === 1;
}

/** Gives the claim back when the answer could not be recorded (nothing was), so the person may answer again. */
export async function releaseAnswer(db: Db, uid: string): Promise<void> {
  await db.query(`UPDATE oauth_records SET payload = payload - 'answering' WHERE model = 'Interaction' AND id = $1`, [uid]);
}

export interface GrantListing {
  id: number;
  client_name: string;
  client_id: string;
  granted_by: string | null;
  granted_by_id: number | null;
  can_place_orders: boolean;
  needs_approval: boolean;
  order_limit_cents: number | null;
  daily_limit_cents: number | null;
  monthly_limit_cents: number | null;
  created_at: Date;
  last_used_at: Date | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  state: KeyState;
}

/** The workspace's connected apps (live grants first, newest first), for Settings → Connected apps. */
export async function listGrants(db: Db, workspaceId: number, clock: Clock): Promise<GrantListing[]> {
  const { rows } = await db.query<{
    id: number;
    name: string;
    oauth_client_id: string;
    user_name: string | null;
    oauth_user_id: number | null;
    can_place_orders: boolean;
    needs_approval: boolean;
    order_limit_cents: number | null;
    daily_limit_cents: number | null;
    monthly_limit_cents: number | null;
    created_at: Date;
    last_used_at: Date | null;
    expires_at: Date | null;
    revoked_at: Date | null;
  }>(
    `SELECT k.id, k.name, k.oauth_client_id, u.name AS user_name, k.oauth_user_id, k.can_place_orders, k.needs_approval,
            k.order_limit_cents, k.daily_limit_cents, k.monthly_limit_cents, k.created_at, k.last_used_at, k.expires_at, k.revoked_at
       FROM api_keys k LEFT JOIN users u ON u.id = k.oauth_user_id
      WHERE k.workspace_id = $1 AND k.oauth_grant_id IS NOT NULL
      ORDER BY (k.revoked_at IS NULL) DESC, k.created_at DESC, k.id DESC`,
    [workspaceId],
  );
  const now = clock.now();
  return rows.map((r) => ({
    id: r.id,
    client_name: r.name,
    client_id: r.oauth_client_id,
    granted_by: r.user_name,
    granted_by_id: r.oauth_user_id,
    can_place_orders: r.can_place_orders,
    needs_approval: r.needs_approval,
    order_limit_cents: r.order_limit_cents,
    daily_limit_cents: r.daily_limit_cents,
    monthly_limit_cents: r.monthly_limit_cents,
    created_at: r.created_at,
    last_used_at: r.last_used_at,
    expires_at: r.expires_at,
    revoked_at: r.revoked_at,
    state: keyState({ revokedAt: r.revoked_at, expiresAt: r.expires_at }, now),
  }));
}

/**
 * Revokes a connected app: its row stops resolving (every process within the resolver's 5 s) and
 * the OAuth server's grant, codes and tokens are deleted, so no refresh can revive it. Another
 * workspace's grant is "not found".
 */
export async function revokeGrant(db: Db, workspaceId: number, keyId: number, clock: Clock): Promise<void> {
  await withTransaction(db, async (tx) => {
    const { rows } = await tx.query<{ oauth_grant_id: string }>(
      `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, to_timestamp($3::double precision / 1000))
        WHERE id = $1 AND workspace_id = $2 AND oauth_grant_id IS NOT NULL RETURNING oauth_grant_id`,
      [keyId, workspaceId, clock.now()],
    );
    const grantId = rows[0]?.oauth_grant_id;
    if (!grantId) throw notFound('Connected app');
    await deleteGrantRecords(tx, [grantId]);
  });
}

/** The OAuth server's grants, codes and tokens of these grants: no refresh can revive them. */
async function deleteGrantRecords(tx: Db, grantIds: string[]): Promise<void> {
  if (grantIds.length === 0) return;
  await tx.query(`DELETE FROM oauth_records WHERE grant_id = ANY($1::text[]) OR (model = 'Grant' AND id = ANY($1::text[]))`, [grantIds]);
}

/**
 * Ends every live grant a person allowed for a workspace, as Revoke does each: they were removed
 * from it, or left. An app's refresh token keeps rotating, so without this a person no longer a
 * member would reach the workspace through it for ever. Answers how many ended.
 */
export async function endGrantsOf(db: Db, workspaceId: number, userId: number, clock: Clock): Promise<number> {
  return withTransaction(db, async (tx) => {
    const { rows } = await tx.query<{ oauth_grant_id: string }>(
      `UPDATE api_keys SET revoked_at = to_timestamp($3::double precision / 1000)
        WHERE workspace_id = $1 AND oauth_user_id = $2 AND oauth_grant_id IS NOT NULL AND revoked_at IS NULL RETURNING oauth_grant_id`,
      [workspaceId, userId, clock.now()],
    );
    await deleteGrantRecords(
      tx,
      rows.map((r) => r.oauth_grant_id),
    );
    return rows.length;
  });
}

/** The OAuth server revoked a grant itself (a refresh token used twice): its row goes with it. */
export async function grantRevoked(pool: Db, grantId: string): Promise<void> {
  await pool.query('UPDATE api_keys SET revoked_at = now() WHERE oauth_grant_id = $1 AND revoked_at IS NULL', [grantId]);
}

/** The live grant row of a grant, if any: what a console revocation page shows. */
export async function findGrant(db: Db, workspaceId: number, keyId: number, clock: Clock): Promise<GrantListing> {
  const found = (await listGrants(db, workspaceId, clock)).find((g) => g.id === keyId);
  if (!found) throw notFound('Connected app');
  return found;
}
