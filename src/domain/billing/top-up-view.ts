import type { TopUpStatus } from '../../common/enums.js';
import { isoSeconds } from '../../common/iso-seconds.js';
import { formatCents } from '../money/format.js';

/** A top-up request as every read selects it (`TOP_UP_COLUMNS` from `top_up_requests t` and `TOP_UP_JOINS`). */
export interface TopUpRow {
  id: number;
  workspace_id: number;
  workspace_name: string;
  reference: string;
  provider: string;
  status: TopUpStatus;
  amount_cents: number;
  received_cents: number | null;
  instructions: string;
  requested_by_user_id: number | null;
  requested_by_user_name: string | null;
  requested_by_key_id: number | null;
  requested_by_key_name: string | null;
  requested_at: Date;
  decided_by_user_id: number | null;
  decided_by_user_name: string | null;
  decided_by_key_id: number | null;
  decided_at: Date | null;
  reject_reason: string | null;
  ledger_transaction_id: number | null;
}

export const TOP_UP_COLUMNS = `t.id, t.workspace_id, w.name AS workspace_name, t.reference, t.provider, t.status, t.amount_cents, t.received_cents,
       t.instructions, t.requested_by_user_id, ru.name AS requested_by_user_name, t.requested_by_key_id, rk.name AS requested_by_key_name,
       t.requested_at, t.decided_by_user_id, du.name AS decided_by_user_name, t.decided_by_key_id, t.decided_at, t.reject_reason,
       t.ledger_transaction_id`;
export const TOP_UP_JOINS = `JOIN workspaces w ON w.id = t.workspace_id
  LEFT JOIN users ru ON ru.id = t.requested_by_user_id
  LEFT JOIN api_keys rk ON rk.id = t.requested_by_key_id
  LEFT JOIN users du ON du.id = t.decided_by_user_id`;

/** Top-ups are asked and paid in US dollars, the ledger's currency, whatever the workspace shows its balance in. */
export const usd = (cents: number) => formatCents(cents, 'USD', 1);

/** Where a workspace's people see a request's invoice: the console's printable page. */
export const invoicePath = (workspaceId: number, id: number) => `/app/w/${workspaceId}/funds/${id}/invoice`;

/** Who asked for a top-up: a person in the console, or a key through the API. */
export type Requester = { kind: 'person'; id: number; name: string } | { kind: 'key'; id: number; name: string };

/** A request as the API and the console show it to the workspace (docs/billing.md). */
export function topUpView(r: TopUpRow, baseUrl: string) {
  const requestedBy: Requester =
    r.requested_by_user_id !== null
      ? { kind: 'person', id: r.requested_by_user_id, name: r.requested_by_user_name ?? '' }
      : { kind: 'key', id: r.requested_by_key_id!, name: r.requested_by_key_name ?? '' };
  return {
    id: r.id,
    reference: r.reference,
    status: r.status,
    provider: r.provider,
    amount_cents: r.amount_cents,
    amount_formatted: usd(r.amount_cents),
    received_cents: r.received_cents,
    received_formatted: r.received_cents === null ? null : usd(r.received_cents),
    instructions: r.instructions,
    invoice_url: `${baseUrl}${invoicePath(r.workspace_id, r.id)}`,
    requested_by: requestedBy,
    requested_at: isoSeconds(r.requested_at),
    decided_at: r.decided_at ? isoSeconds(r.decided_at) : null,
    reject_reason: r.reject_reason,
  };
}
export type TopUpView = ReturnType<typeof topUpView>;

/** A request as the operations console shows it to staff: the workspace's view, with the workspace and who decided. */
export function opsTopUpView(r: TopUpRow, baseUrl: string) {
  return {
    ...topUpView(r, baseUrl),
    workspace: { id: r.workspace_id, name: r.workspace_name },
    decided_by: r.decided_by_user_id !== null ? { user_id: r.decided_by_user_id, name: r.decided_by_user_name ?? '' } : null,
    ledger_transaction_id: r.ledger_transaction_id,
  };
}
export type OpsTopUpView = ReturnType<typeof opsTopUpView>;
