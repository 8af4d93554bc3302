import type { ApprovalAction, ApprovalStatus, OfferFormat } from '../../common/enums.js';
import { isoSeconds } from '../../common/iso-seconds.js';
import { formatCents } from '../money/format.js';

/**
 * One thing an approval request would buy or pay, as checked when the key asked: an offer to
 * place (`offer_id`, no `order_id`) or a live placement to approve (`order_id` and `live_url`).
 * Shown to the person who decides; approving runs every check again.
 */
export interface ApprovalItem {
  offer_id: number;
  order_id: number | null;
  outlet: { id: number; name: string; domain: string };
  format: OfferFormat;
  title: string;
  price: number;
  target_url: string;
  anchor_text: string | null;
  live_url: string | null;
}

/** An approval request's row, with what its view names: the key that asked, the person who decided. */
export interface ApprovalRow {
  id: number;
  workspace_id: number;
  action: ApprovalAction;
  status: ApprovalStatus;
  requested_by_key_id: number;
  key_name: string;
  key_prefix: string;
  by_app: boolean;
  body: unknown;
  order_id: number | null;
  total_cents: number;
  items: ApprovalItem[];
  requested_at: Date;
  expires_at: Date;
  decided_by_user_id: number | null;
  decided_by_name: string | null;
  decided_at: Date | null;
  decline_reason: string | null;
  /** bigint[] arrives as text. */
  order_ids: string[];
  failure: { code: string; message: string } | null;
  currency: string;
  per_usd: number;
}

/** The columns every read of a request selects (`ApprovalRow`), from `approval_requests a`. */
export const APPROVAL_COLUMNS = `a.id, a.workspace_id, a.action, a.status, a.requested_by_key_id, k.name AS key_name, k.prefix AS key_prefix,
       (k.oauth_grant_id IS NOT NULL) AS by_app, a.body, a.order_id, a.total_cents, a.items, a.requested_at, a.expires_at,
       a.decided_by_user_id, u.name AS decided_by_name, a.decided_at, a.decline_reason, a.order_ids, a.failure,
       w.currency, fx.per_usd::float8 AS per_usd`;
export const APPROVAL_JOINS = `JOIN api_keys k ON k.id = a.requested_by_key_id
  JOIN workspaces w ON w.id = a.workspace_id JOIN fx_rates fx ON fx.currency = w.currency
  LEFT JOIN users u ON u.id = a.decided_by_user_id`;

/** Where a person approves request `id` of `workspaceId`: the console's page of it. */
export const approvePath = (workspaceId: number, id: number) => `/app/w/${workspaceId}/approvals/${id}`;

/**
 * A pending request past its time reads as expired before the sweep marks it: nobody can approve
 * it any more.
 */
export const statusAt = (row: Pick<ApprovalRow, 'status' | 'expires_at'>, now: number): ApprovalStatus =>
  row.status === 'pending' && row.expires_at.getTime() <= now ? 'expired' : row.status;

/** The request as the API, MCP, webhooks and the console show it (docs/approvals.md). */
export function approvalView(r: ApprovalRow, now: number, baseUrl: string) {
  const fmt = (c: number) => formatCents(c, r.currency, r.per_usd);
  return {
    id: r.id,
    status: statusAt(r, now),
    action: r.action,
    total_cents: r.total_cents,
    total_formatted: fmt(r.total_cents),
    items: r.items.map((i) => ({ ...i, price_formatted: fmt(i.price) })),
    requested_by: { key_id: r.requested_by_key_id, key_name: r.key_name, kind: r.by_app ? ('oauth_app' as const) : ('key' as const) },
    requested_at: isoSeconds(r.requested_at)!,
    expires_at: isoSeconds(r.expires_at)!,
    approve_url: `${baseUrl}${approvePath(r.workspace_id, r.id)}`,
    decided_by: r.decided_by_user_id === null ? null : { user_id: r.decided_by_user_id, name: r.decided_by_name ?? '' },
    decided_at: isoSeconds(r.decided_at),
    decline_reason: r.decline_reason,
    order_ids: r.order_ids.map(Number),
    failure: r.failure,
  };
}

export type ApprovalRequestView = ReturnType<typeof approvalView>;
