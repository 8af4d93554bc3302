import type { ApprovalStatus } from '../../common/enums.js';
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
