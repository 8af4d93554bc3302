import { type Db, withTransaction } from '../../db/handle.js';
import { type NewEvent, recordEvents } from '../events/record.js';
import { APPROVAL_COLUMNS, APPROVAL_JOINS, type ApprovalRow, approvalView } from './approval-view.js';

/** The most requests one pass expires; the sweep comes back for the rest. */
const BATCH = 500;

/**
 * Marks pending requests past their time expired, with their `approval_request.expired` events,
 * in the caller's transaction; `only` narrows it to one key's body (a new request for it frees the
 * place of an old one). Requests another transaction holds (being approved, declined or
 * cancelled right now) are skipped: that one decides them.
 */
export async function expireApprovalsIn(tx: Db, now: number, baseUrl: string, only?: { keyId: number; fingerprint: string }): Promise<number> {
  const { rows } = await tx.query<ApprovalRow>({
    name: only ? 'approval_expire_one_body' : 'approval_expire_due',
    text: `WITH due AS (
             SELECT id FROM approval_requests
              WHERE status = 'pending' AND expires_at <= $1 ${only ? 'AND requested_by_key_id = $3 AND fingerprint = $4' : ''}
              ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED),
           expired AS (
             UPDATE approval_requests x SET status = 'expired' FROM due WHERE x.id = due.id RETURNING x.*)
           SELECT ${APPROVAL_COLUMNS} FROM expired a ${APPROVAL_JOINS} ORDER BY a.id`,
    values: [new Date(now), BATCH, ...(only ? [only.keyId, only.fingerprint] : [])],
  });
  const events: NewEvent[] = rows.map((r) => ({
    type: 'approval_request.expired',
    owner: { party: 'buyer', workspaceId: r.workspace_id },
    actor: 'system',
    data: approvalView(r, now, baseUrl),
  }));
  await recordEvents(tx, events, now);
  return rows.length;
}

/** The sweep's part for approval requests: every pending one past its time, expired (docs/approvals.md). */
export async function expireApprovals(pool: Db, now: number, baseUrl: string): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await withTransaction(pool, (tx) => expireApprovalsIn(tx, now, baseUrl));
    total += n;
    if (n < BATCH) return total;
  }
}
