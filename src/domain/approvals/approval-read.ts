import type { ApprovalStatus } from '../../common/enums.js';
import { isoSeconds } from '../../common/iso-seconds.js';
import type { Db } from '../../db/handle.js';
import { notFound } from '../errors.js';
import { APPROVAL_COLUMNS, APPROVAL_JOINS, type ApprovalRequestView, type ApprovalRow, approvalView } from './approval-view.js';

/** A request's status as of `$n`: a pending one past its time is expired (`statusAt`, in SQL). */
const effectiveStatus = (at: string) => `(CASE WHEN a.status = 'pending' AND a.expires_at <= ${at} THEN 'expired' ELSE a.status::text END)`;

/** What reading a request needs: the clock's time and the console's address (its `approve_url`). */
export interface ApprovalReadContext {
  now: number;
  baseUrl: string;
}

/** One request of the workspace; another workspace's is not found, as a missing one. */
export async function getApproval(q: Db, workspaceId: number, id: number, at: ApprovalReadContext): Promise<ApprovalRequestView> {
  const { rows } = await q.query<ApprovalRow>({
    name: 'approval_get',
    text: `SELECT ${APPROVAL_COLUMNS} FROM approval_requests a ${APPROVAL_JOINS} WHERE a.id = $1 AND a.workspace_id = $2`,
    values: [id, workspaceId],
  });
  if (!rows[0]) throw notFound('Approval request');
  return approvalView(rows[0], at.now, at.baseUrl);
}

/** The workspace's requests, pending ones first (oldest first: the next to expire), then the rest newest first. */
export async function listApprovals(
  q: Db,
  workspaceId: number,
  filter: { status?: ApprovalStatus | undefined },
  page: number,
  perPage: number,
  at: ApprovalReadContext,
): Promise<{ items: ApprovalRequestView[]; total: number }> {
  const { rows } = await q.query<ApprovalRow & { total: number }>({
    name: 'approval_list',
    text: `SELECT ${APPROVAL_COLUMNS}, count(*) OVER ()::int AS total
             FROM approval_requests a ${APPROVAL_JOINS}
            WHERE a.workspace_id = $1 AND ($2::text IS NULL OR ${effectiveStatus('$5')} = $2)
            ORDER BY (${effectiveStatus('$5')} = 'pending') DESC,
                     CASE WHEN ${effectiveStatus('$5')} = 'pending' THEN a.id END ASC, a.id DESC
            LIMIT $3 OFFSET $4`,
    values: [workspaceId, filter.status ?? null, perPage, (page - 1) * perPage, new Date(at.now)],
  });
  let total = rows[0]?.total ?? 0;
  if (rows.length === 0 && page > 1) {
    const counted = await q.query<{ n: number }>({
      name: 'approval_count',
      text: `SELECT count(*)::int AS n FROM approval_requests a WHERE a.workspace_id = $1 AND ($2::text IS NULL OR ${effectiveStatus('$3')} = $2)`,
      values: [workspaceId, filter.status ?? null, new Date(at.now)],
    });
    total = counted.rows[0]!.n;
  }
  return { items: rows.map((r) => approvalView(r, at.now, at.baseUrl)), total };
}

/** How many requests wait for a person in the workspace (the console's navigation shows it). */
export async function countPending(q: Db, workspaceId: number, now: number): Promise<number> {
  const { rows } = await q.query<{ n: number }>({
    name: 'approval_count_pending',
    text: `SELECT count(*)::int AS n FROM approval_requests WHERE workspace_id = $1 AND status = 'pending' AND expires_at > $2`,
    values: [workspaceId, new Date(now)],
  });
  return rows[0]!.n;
}

/** Who approved the request that placed an order: the person, when, and the request. */
export interface OrderApproval {
  request_id: number;
  decided_by: { user_id: number; name: string } | null;
  decided_at: string | null;
}

/**
 * The approval behind an order of the workspace (`orders.approval_request_id`), or null for an
 * order placed without one, or another workspace's. The console's order page shows it.
 */
export async function approvalOfOrder(q: Db, workspaceId: number, orderId: number): Promise<OrderApproval | null> {
  const { rows } = await q.query<{ id: number; decided_by_user_id: number | null; decided_by_name: string | null; decided_at: Date | null }>({
    name: 'approval_of_order',
    text: `SELECT a.id, a.decided_by_user_id, u.name AS decided_by_name, a.decided_at
             FROM orders o JOIN approval_requests a ON a.id = o.approval_request_id AND a.workspace_id = o.workspace_id
             LEFT JOIN users u ON u.id = a.decided_by_user_id
            WHERE o.id = $1 AND o.workspace_id = $2`,
    values: [orderId, workspaceId],
  });
  const r = rows[0];
  if (!r) return null;
  return {
    request_id: r.id,
    decided_by: r.decided_by_user_id === null ? null : { user_id: r.decided_by_user_id, name: r.decided_by_name ?? '' },
    decided_at: isoSeconds(r.decided_at),
  };
}
