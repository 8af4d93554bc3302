import { withTransaction, type Db } from '../../db/handle.js';
import { invalidInput, notFound } from '../errors.js';
import { recordEvents } from '../events/record.js';
import { creditTopUp } from '../ledger/ledger-service.js';
import { formatCents } from '../money/format.js';
import { refuseUnstorableText } from '../text-input.js';
import { requireStaff, type Staff } from '../users/staff.js';
import type { BillingDeps } from './billing-deps.js';
import type { TopUpReceipt } from './provider.js';
import { TOP_UP_COLUMNS, TOP_UP_JOINS, type OpsTopUpView, opsTopUpView, type TopUpRow, type TopUpView, topUpView } from './top-up-view.js';
import { requirePending } from './top-ups.js';

// Staff deciding a top-up request (docs/billing.md): the money received is confirmed (the balance
// credited, once) or the request rejected. Each is one transaction that locks the request first,
// so two staff pressing at once take turns and the second meets the new status (409).

/** The longest reason kept for a rejection, or an adjustment. */
export const MAX_REASON = 1000;

/** The `balance.topped_up` event's data: the money credited, the balance after it, the request and who confirmed it. */
export interface ToppedUpData {
  workspace_id: number;
  amount: number;
  amount_formatted: string;
  balance: number;
  balance_formatted: string;
  top_up: TopUpView;
  confirmed_by_user_id: number | null;
}

async function lockById(tx: Db, id: number): Promise<TopUpRow> {
  const { rows } = await tx.query<TopUpRow>({
    name: 'top_up_lock_any',
    text: `SELECT ${TOP_UP_COLUMNS} FROM top_up_requests t ${TOP_UP_JOINS} WHERE t.id = $1 FOR UPDATE OF t`,
    values: [id],
  });
  if (!rows[0]) throw notFound('Top-up');
  return rows[0];
}

async function readById(tx: Db, id: number): Promise<TopUpRow> {
  const { rows } = await tx.query<TopUpRow>({
    name: 'top_up_get_any',
    text: `SELECT ${TOP_UP_COLUMNS} FROM top_up_requests t ${TOP_UP_JOINS} WHERE t.id = $1`,
    values: [id],
  });
  return rows[0]!;
}

/** A workspace's currency and rate: balances are shown in it, as everywhere. */
export async function workspaceMoney(tx: Db, workspaceId: number): Promise<(cents: number) => string> {
  const { rows } = await tx.query<{ currency: string; per_usd: number }>({
    name: 'billing_workspace_currency',
    text: 'SELECT w.currency, fx.per_usd::float8 AS per_usd FROM workspaces w JOIN fx_rates fx ON fx.currency = w.currency WHERE w.id = $1',
    values: [workspaceId],
  });
  const { currency, per_usd } = rows[0]!;
  return (cents) => formatCents(cents, currency, per_usd);
}

/**
 * Credits a receipt to its locked, pending request: the ledger's top-up (external → the
 * workspace's available balance), the request confirmed with that transaction and who confirmed
 * it, and `balance.topped_up`, all in the caller's transaction. What a card provider's webhook
 * would call too, with the request locked by its reference (docs/billing.md).
 */
async function creditReceipt(tx: Db, deps: BillingDeps, row: TopUpRow, receipt: TopUpReceipt, now: number): Promise<void> {
  const { balanceCents, transactionId } = await creditTopUp(tx, row.workspace_id, receipt.receivedCents, 'received_usd');
  const staffUserId = 'staffUserId' in receipt.confirmedBy ? receipt.confirmedBy.staffUserId : null;
  await tx.query({
    name: 'top_up_confirm',
    text: `UPDATE top_up_requests SET status = 'confirmed', received_cents = $2, decided_by_user_id = $3, decided_at = $4, ledger_transaction_id = $5 WHERE id = $1`,
    values: [row.id, receipt.receivedCents, staffUserId, new Date(now), transactionId],
  });
  const fmt = await workspaceMoney(tx, row.workspace_id);
  const data: ToppedUpData = {
    workspace_id: row.workspace_id,
    amount: receipt.receivedCents,
    amount_formatted: fmt(receipt.receivedCents),
    balance: balanceCents,
    balance_formatted: fmt(balanceCents),
    top_up: topUpView(await readById(tx, row.id), deps.baseUrl),
    confirmed_by_user_id: staffUserId,
  };
  await recordEvents(tx, [{ type: 'balance.topped_up', owner: { party: 'buyer', workspaceId: row.workspace_id }, actor: 'system', data }], now);
}

/**
 * Staff confirm the money received for a request (`receivedCents`, which may differ from what
 * was asked): credited once, however many staff press at once.
 */
export async function confirmTopUp(deps: BillingDeps, staff: Staff, id: number, receivedCents: number): Promise<OpsTopUpView> {
  return withTransaction(deps.pool, async (tx) => {
    const now = deps.clock.now();
    await requireStaff(tx, staff, 'Top-up');
    const row = await lockById(tx, id);
    requirePending(row, 'confirm');
    const receipt = await deps.provider.confirmTopUp({ kind: 'staff', staffUserId: staff.userId, reference: row.reference, receivedCents });
    await creditReceipt(tx, deps, row, receipt, now);
    return opsTopUpView(await readById(tx, id), deps.baseUrl);
  });
}

/** A reason as staff typed it: trimmed, required, at most MAX_REASON characters; a 422 naming `field`. */
export function staffReason(reason: string, field = 'reason'): string {
  const text = reason.trim();
  if (text === '') throw invalidInput({ [field]: ['is required'] });
  if (text.length > MAX_REASON) throw invalidInput({ [field]: [`must be at most ${MAX_REASON.toLocaleString('en-US')} characters`] });
  refuseUnstorableText({ [field]: text }, 'form');
  return text;
}

/** Staff reject a request (no money came, or not for this): it ends, with the reason the workspace reads. */
export async function rejectTopUp(deps: BillingDeps, staff: Staff, id: number, reason: string): Promise<OpsTopUpView> {
  const text = staffReason(reason);
  return withTransaction(deps.pool, async (tx) => {
    const now = deps.clock.now();
    await requireStaff(tx, staff, 'Top-up');
    const row = await lockById(tx, id);
    requirePending(row, 'reject');
    await deps.provider.cancelTopUp(row.reference);
    await tx.query({
      name: 'top_up_reject',
      text: `UPDATE top_up_requests SET status = 'rejected', decided_by_user_id = $2, decided_at = $3, reject_reason = $4 WHERE id = $1`,
      values: [id, staff.userId, new Date(now), text],
    });
    return opsTopUpView(await readById(tx, id), deps.baseUrl);
  });
}
