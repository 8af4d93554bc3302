import type { TopUpStatus } from '../../common/enums.js';
import type { Db } from '../../db/handle.js';
import { conflict, DomainError, forbidden, invalidInput, notFound } from '../errors.js';
import { type Kept, type OnceOptions, runOnce } from '../idempotency/record-once.js';
import type { WorkspacePrincipal } from '../keys/principal.js';
import { roleIn } from '../users/memberships.js';
import { can } from '../users/permissions.js';
import type { BillingDeps } from './billing-deps.js';
import { newTopUpReference } from './reference.js';
import { TOP_UP_COLUMNS, TOP_UP_JOINS, type TopUpRow, type TopUpView, topUpView, usd } from './top-up-view.js';

// A workspace adding funds (docs/billing.md): a request with a reference and the provider's
// instructions, which staff confirm once the money is in (confirm.ts); while it waits, the
// workspace may cancel it. Owners in the console, or a key that may spend through the API.

/** Who adds funds: a person of the workspace (the console), or a key that may spend (the API). */
export type FundsActor = { kind: 'person'; workspaceId: number; userId: number } | { kind: 'key'; principal: WorkspacePrincipal };

/** Requests a workspace may have waiting at once: an agent in a loop must not fill the staff's queue. */
export const MAX_PENDING_TOP_UPS = 10;

const workspaceOf = (actor: FundsActor) => (actor.kind === 'person' ? actor.workspaceId : actor.principal.workspaceId);

/**
 * Checks in the caller's transaction that the actor may add funds: a person's role is read now
 * (an owner: `manage_billing`; someone no longer a member is told the workspace does not exist),
 * a key must be one that may spend.
 */
async function requireFundsActor(tx: Db, actor: FundsActor): Promise<void> {
  if (actor.kind === 'key') {
    if (!actor.principal.canPlaceOrders) throw forbidden('This key cannot add funds. Use a key created with "Can place orders".');
    return;
  }
  const role = await roleIn(tx, actor.userId, { workspaceId: actor.workspaceId });
  if (!role) throw notFound('Workspace');
  if (!can(role, 'manage_billing')) throw forbidden("Only the workspace's owners can add funds or cancel a top-up.");
}

/** The amount against the settings' limits, a 422 naming `field` (the API's and the console's `amount_usd`). */
export function checkTopUpAmount(deps: Pick<BillingDeps, 'limits'>, cents: number, field = 'amount_usd'): void {
  const { minCents, maxCents } = deps.limits;
  if (!Number.isSafeInteger(cents) || cents < minCents) throw invalidInput({ [field]: [`must be at least ${usd(minCents)}`] }, `A top-up must be at least ${usd(minCents)}.`);
  if (cents > maxCents) throw invalidInput({ [field]: [`must be at most ${usd(maxCents)}`] }, `A top-up must be at most ${usd(maxCents)}.`);
}

async function readRow(db: Db, workspaceId: number, id: number, lock: boolean): Promise<TopUpRow> {
  const { rows } = await db.query<TopUpRow>({
    name: lock ? 'top_up_lock' : 'top_up_get',
    text: `SELECT ${TOP_UP_COLUMNS} FROM top_up_requests t ${TOP_UP_JOINS} WHERE t.id = $1 AND t.workspace_id = $2${lock ? ' FOR UPDATE OF t' : ''}`,
    values: [id, workspaceId],
  });
  if (!rows[0]) throw notFound('Top-up');
  return rows[0];
}

/** Only a pending request can be cancelled, confirmed or rejected; anything else is a 409 naming its status. */
export function requirePending(row: Pick<TopUpRow, 'status'>, doing: string): void {
  if (row.status !== 'pending') throw conflict(`Cannot ${doing}: the top-up is ${row.status}.`, row.status);
}

/**
 * A new top-up request: the amount checked against the limits, a reference drawn (again, on the
 * rare repeat), the provider's instructions for it, all kept with the request. Nothing is
 * credited until staff confirm the money received.
 */
export async function requestTopUp(deps: BillingDeps, actor: FundsActor, amountCents: number, options: OnceOptions = { once: undefined }): Promise<Kept<TopUpView>> {
  checkTopUpAmount(deps, amountCents);
  const workspaceId = workspaceOf(actor);
  return runOnce(deps, options, async (tx, now) => {
    await requireFundsActor(tx, actor);
    // The workspace's row, so that two requests at once count each other's (NO KEY: placements' foreign keys go on).
    const { rows } = await tx.query<{ name: string; pending: number }>({
      name: 'top_up_workspace',
      text: `SELECT w.name, (SELECT count(*)::int FROM top_up_requests t WHERE t.workspace_id = w.id AND t.status = 'pending') AS pending
               FROM workspaces w WHERE w.id = $1 FOR NO KEY UPDATE OF w`,
      values: [workspaceId],
    });
    const ws = rows[0];
    if (!ws) throw notFound('Workspace');
    if (ws.pending >= MAX_PENDING_TOP_UPS) {
      throw new DomainError('conflict', `The workspace has ${MAX_PENDING_TOP_UPS} top-ups waiting for payment already: pay or cancel one first.`, { reason: 'too_many_pending' });
    }
    for (let attempt = 0; attempt < 5; attempt++) {
      const reference = newTopUpReference();
      const { instructions } = await deps.provider.createTopUp({ reference, amountCents, amountFormatted: usd(amountCents), workspace: { id: workspaceId, name: ws.name } });
      const inserted = await tx.query<{ id: number }>({
        name: 'top_up_insert',
        text: `INSERT INTO top_up_requests (workspace_id, reference, provider, amount_cents, instructions, requested_by_user_id, requested_by_key_id, requested_at)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (reference) DO NOTHING RETURNING id`,
        values: [
          workspaceId,
          reference,
          deps.provider.id,
          amountCents,
          instructions,
          actor.kind === 'person' ? actor.userId : null,
          actor.kind === 'key' ? actor.principal.keyId : null,
          new Date(now),
        ],
      });
      if (inserted.rows[0]) return topUpView(await readRow(tx, workspaceId, inserted.rows[0].id, false), deps.baseUrl);
    }
    throw new Error('five top-up references in a row were taken');
  });
}

/** Withdraws a pending request (pending → cancelled): money sent for it afterwards is not credited. */
export async function cancelTopUp(deps: BillingDeps, actor: FundsActor, id: number, options: OnceOptions = { once: undefined }): Promise<Kept<TopUpView>> {
  const workspaceId = workspaceOf(actor);
  return runOnce(deps, options, async (tx, now) => {
    await requireFundsActor(tx, actor);
    const row = await readRow(tx, workspaceId, id, true);
    requirePending(row, 'cancel');
    await deps.provider.cancelTopUp(row.reference);
    await tx.query({
      name: 'top_up_cancel',
      text: `UPDATE top_up_requests SET status = 'cancelled', decided_by_user_id = $2, decided_by_key_id = $3, decided_at = $4 WHERE id = $1`,
      values: [id, actor.kind === 'person' ? actor.userId : null, actor.kind === 'key' ? actor.principal.keyId : null, new Date(now)],
    });
    return topUpView(await readRow(tx, workspaceId, id, false), deps.baseUrl);
  });
}

/** One of the workspace's requests; another workspace's is not found, as one that does not exist. */
export async function getTopUp(db: Db, workspaceId: number, id: number, baseUrl: string): Promise<TopUpView> {
  return topUpView(await readRow(db, workspaceId, id, false), baseUrl);
}

/** The workspace's requests, newest first, filtered by status. */
export async function listTopUps(
  db: Db,
  workspaceId: number,
  filter: { status?: TopUpStatus | undefined },
  page: number,
  perPage: number,
  baseUrl: string,
): Promise<{ items: TopUpView[]; total: number }> {
  const { rows } = await db.query<TopUpRow & { total: number }>({
    name: 'top_up_list',
    text: `SELECT ${TOP_UP_COLUMNS}, (count(*) OVER ())::int AS total FROM top_up_requests t ${TOP_UP_JOINS}
            WHERE t.workspace_id = $1 AND ($2::top_up_status IS NULL OR t.status = $2)
            ORDER BY t.id DESC LIMIT $3 OFFSET $4`,
    values: [workspaceId, filter.status ?? null, perPage, (page - 1) * perPage],
  });
  let total = rows[0]?.total ?? 0;
  if (!rows.length && page > 1) {
    const c = await db.query<{ n: number }>({
      name: 'top_up_count',
      text: `SELECT count(*)::int AS n FROM top_up_requests WHERE workspace_id = $1 AND ($2::top_up_status IS NULL OR status = $2)`,
      values: [workspaceId, filter.status ?? null],
    });
    total = c.rows[0]!.n;
  }
  return { items: rows.map((r) => topUpView(r, baseUrl)), total };
}
