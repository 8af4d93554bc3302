import type { Db } from '../../db/handle.js';
import { conflict, DomainError, invalidInput, notFound } from '../errors.js';
import { type EventActor, type ApprovalEventType } from '../events/event-types.js';
import { recordEvents } from '../events/record.js';
import { type Kept, type OnceOptions, runOnce } from '../idempotency/record-once.js';
import type { WorkspacePrincipal } from '../keys/principal.js';
import { buyerActions } from '../orders/buyer-actions.js';
import type { WorkspaceMember } from '../orders/buyer-actor.js';
import { ApprovalNeeded, type PlaceOrdersInput } from '../orders/placement-rules.js';
import { placeOrders } from '../orders/placement-transaction.js';
import { roleIn } from '../users/memberships.js';
import { requireSpend } from '../users/permissions.js';
import { getApproval } from './approval-read.js';
import { APPROVAL_COLUMNS, APPROVAL_JOINS, type ApprovalRequestView, type ApprovalRow, statusAt } from './approval-view.js';
import type { ApprovalDeps } from './ask.js';

/** The longest decline reason kept. */
export const MAX_DECLINE_REASON = 1000;

/** The request, locked: two people deciding at once, the agent cancelling and the sweep take turns. */
async function lockRequest(tx: Db, workspaceId: number, id: number): Promise<ApprovalRow> {
  const { rows } = await tx.query<ApprovalRow>({
    name: 'approval_lock',
    text: `SELECT ${APPROVAL_COLUMNS} FROM approval_requests a ${APPROVAL_JOINS} WHERE a.id = $1 AND a.workspace_id = $2 FOR UPDATE OF a`,
    values: [id, workspaceId],
  });
  if (!rows[0]) throw notFound('Approval request');
  return rows[0];
}

/** Only a pending request can be decided or cancelled; anything else is a 409 naming its status. */
function requirePending(row: ApprovalRow, now: number, doing: string): void {
  const status = statusAt(row, now);
  if (status !== 'pending') throw conflict(`Cannot ${doing}: the approval request is ${status}.`, status);
}

/** A person decides only with the right to spend the workspace's money (owners: docs/people.md). */
async function requireDecider(tx: Db, person: WorkspaceMember): Promise<void> {
  const role = await roleIn(tx, person.userId, { workspaceId: person.workspaceId });
  if (!role) throw notFound('Approval request');
  requireSpend(role, 'decide');
}

/** The key that asked, as the placement's buyer: its orders and budget are its own. */
function requester(row: ApprovalRow): WorkspacePrincipal {
  return {
    keyId: row.requested_by_key_id,
    name: row.key_name,
    prefix: row.key_prefix,
    canPlaceOrders: true,
    abilities: [],
    workspaceId: row.workspace_id,
    publisherId: null,
  };
}

interface Decision {
  status: 'approved' | 'declined' | 'cancelled' | 'failed';
  actor: EventActor;
  userId?: number | undefined;
  reason?: string | null | undefined;
  orderIds?: number[] | undefined;
  failure?: { code: string; message: string } | undefined;
}

/** Writes the decision and its event, and answers the request as it now is. */
async function decide(tx: Db, deps: ApprovalDeps, row: ApprovalRow, d: Decision, now: number): Promise<ApprovalRequestView> {
  await tx.query({
    name: 'approval_decide',
    text: `UPDATE approval_requests SET status = $2, decided_by_user_id = $3, decided_at = $4, decline_reason = $5, order_ids = $6::bigint[], failure = $7::jsonb
            WHERE id = $1`,
    values: [row.id, d.status, d.userId ?? null, new Date(now), d.reason ?? null, d.orderIds ?? [], d.failure ? JSON.stringify(d.failure) : null],
  });
  const view = await getApproval(tx, row.workspace_id, row.id, { now, baseUrl: deps.baseUrl });
  const type: ApprovalEventType = `approval_request.${d.status}`;
  await recordEvents(tx, [{ type, owner: { party: 'buyer', workspaceId: row.workspace_id }, actor: d.actor, data: view }], now);
  return view;
}

const SAVEPOINT = 'approval_run';

/**
 * What a person does with a request (the console), and what the key that asked may do (cancel).
 * Each is one transaction that locks the request first.
 */
export const approvalRequests = {
  /**
   * Approves: runs the stored request in this transaction, as the key that asked (its orders and
   * budget; the budget never refuses a person's approval) through the same placement the API
   * uses, and records who approved. A balance too low now refuses (402) and the request stays
   * pending; anything else the placement refuses (an offer gone, its price changed since the
   * request: quote_changed, the key revoked, a rule lowered) ends it `failed` with that refusal's code.
   */
  approve: (deps: ApprovalDeps, person: WorkspaceMember, id: number, options: OnceOptions = { once: undefined }): Promise<Kept<ApprovalRequestView>> =>
    runOnce(deps, options, async (tx, now) => {
      await requireDecider(tx, person);
      const row = await lockRequest(tx, person.workspaceId, id);
      requirePending(row, now, 'approve');
      await tx.query(`SAVEPOINT ${SAVEPOINT}`);
      let orderIds: number[];
      try {
        if (row.action === 'place_orders') {
          // The total the person saw is the one they approve: a price changed since is quote_changed (failed).
          const orders = await placeOrders(tx, requester(row), row.body as PlaceOrdersInput, now, deps.durations, {
            approved: { requestId: row.id },
            quotedTotalCents: row.total_cents,
          });
          orderIds = orders.map((o) => o.id);
        } else {
          // The person approves the placement themselves: their right to spend was checked above.
          const order = await buyerActions(deps.durations).approvePlacement(tx, person, row.order_id!, now);
          orderIds = [order.id];
        }
      } catch (error) {
        if (!(error instanceof DomainError) || error instanceof ApprovalNeeded || error.code === 'insufficient_balance' || error.code === 'unavailable') throw error;
        await tx.query(`ROLLBACK TO SAVEPOINT ${SAVEPOINT}`);
        return decide(tx, deps, row, { status: 'failed', actor: 'buyer', userId: person.userId, failure: { code: error.code, message: error.message } }, now);
      }
      return decide(tx, deps, row, { status: 'approved', actor: 'buyer', userId: person.userId, orderIds }, now);
    }),

  /** Declines, with an optional reason the agent can read. */
  decline: (deps: ApprovalDeps, person: WorkspaceMember, id: number, reason: string | null, options: OnceOptions = { once: undefined }): Promise<Kept<ApprovalRequestView>> =>
    runOnce(deps, options, async (tx, now) => {
      const text = reason?.trim() || null;
      if (text !== null && text.length > MAX_DECLINE_REASON) throw invalidInput({ reason: [`must be at most ${MAX_DECLINE_REASON} characters`] });
      await requireDecider(tx, person);
      const row = await lockRequest(tx, person.workspaceId, id);
      requirePending(row, now, 'decline');
      return decide(tx, deps, row, { status: 'declined', actor: 'buyer', userId: person.userId, reason: text }, now);
    }),

  /** Withdrawn by a key of the workspace (the agent no longer wants it). */
  cancel: (deps: ApprovalDeps, principal: WorkspacePrincipal, id: number, options: OnceOptions): Promise<Kept<ApprovalRequestView>> =>
    runOnce(deps, options, async (tx, now) => {
      const row = await lockRequest(tx, principal.workspaceId, id);
      requirePending(row, now, 'cancel');
      return decide(tx, deps, row, { status: 'cancelled', actor: 'buyer' }, now);
    }),
};
