import { isoSeconds } from '../../common/iso-seconds.js';
import { invalidInput, notFound } from '../errors.js';
import { recordEvents } from '../events/record.js';
import { type Kept, type OnceOptions, runOnce } from '../idempotency/record-once.js';
import * as ledger from '../ledger/ledger.js';
import { MAX_BALANCE_CENTS } from '../ledger/limits.js';
import { requireStaff, type Staff } from '../users/staff.js';
import type { BillingDeps } from './billing-deps.js';
import { staffReason, workspaceMoney } from './confirm.js';
import { usd } from './top-up-view.js';

// A staff adjustment (docs/billing.md): a workspace's available balance credited or debited by
// hand, with a reason, for what no other movement covers (a transfer credited twice, a goodwill
// credit). Its own ledger transaction (kind `adjustment`, against the platform's `adjustments`
// account), its row naming who made it and why, and `balance.adjusted`, in one transaction.

/** The `balance.adjusted` event's data: the change, the balance after it, why, and who made it. */
export interface AdjustedData {
  workspace_id: number;
  adjustment_id: number;
  amount: number;
  amount_formatted: string;
  balance: number;
  balance_formatted: string;
  reason: string;
  adjusted_by_user_id: number;
}

export interface AdjustmentView {
  id: number;
  workspace_id: number;
  amount_cents: number;
  amount_formatted: string;
  reason: string;
  staff: { user_id: number; name: string };
  ledger_transaction_id: number;
  created_at: string;
  balance_cents: number;
}

/**
 * Credits (`cents` > 0) or debits (`cents` < 0) the workspace's available balance. A debit may
 * not take it below zero (422 naming `amount_usd`): money held for orders is the orders', and a
 * balance owed is not something the ledger keeps. Kept once under the form's key (`options`): a
 * form sent twice adjusts once.
 */
export async function adjustBalance(
  deps: BillingDeps,
  staff: Staff,
  workspaceId: number,
  cents: number,
  reason: string,
  options: OnceOptions = { once: undefined },
): Promise<Kept<AdjustmentView>> {
  if (!Number.isSafeInteger(cents) || cents === 0) throw invalidInput({ amount_usd: ['must be an amount other than 0'] });
  const text = staffReason(reason);
  return runOnce(deps, options, async (tx, now) => {
    await requireStaff(tx, staff, 'Workspace');
    const exists = await tx.query({ name: 'adjust_workspace', text: 'SELECT 1 FROM workspaces WHERE id = $1', values: [workspaceId] });
    if (exists.rowCount === 0) throw notFound('Workspace');
    const accounts = await ledger.lockWorkspace(tx, workspaceId);
    const after = accounts.availableBalance + cents;
    if (after < 0) throw invalidInput({ amount_usd: [`is more than the available balance (${usd(accounts.availableBalance)})`] }, 'A debit cannot take the available balance below zero.');
    if (after > MAX_BALANCE_CENTS) throw invalidInput({ amount_usd: [`would take the balance beyond ${MAX_BALANCE_CENTS.toLocaleString('en-US')} cents`] });
    const adjustments = await ledger.platformAccount(tx, 'adjustments');
    const [transactionId] = (await ledger.post(tx, [ledger.adjustment(accounts, adjustments, cents)])) as [number];
    const { rows } = await tx.query<{ id: number; name: string }>({
      name: 'adjustment_insert',
      text: `INSERT INTO ledger_adjustments (workspace_id, amount_cents, reason, staff_user_id, ledger_transaction_id, created_at)
             VALUES ($1, $2, $3, $4, $5, $6) RETURNING id, (SELECT name FROM users WHERE id = $4) AS name`,
      values: [workspaceId, cents, text, staff.userId, transactionId, new Date(now)],
    });
    const row = rows[0]!;
    const fmt = await workspaceMoney(tx, workspaceId);
    const data: AdjustedData = {
      workspace_id: workspaceId,
      adjustment_id: row.id,
      amount: cents,
      amount_formatted: fmt(cents),
      balance: after,
      balance_formatted: fmt(after),
      reason: text,
      adjusted_by_user_id: staff.userId,
    };
    await recordEvents(tx, [{ type: 'balance.adjusted', owner: { party: 'buyer', workspaceId }, actor: 'system', data }], now);
    return {
      id: row.id,
      workspace_id: workspaceId,
      amount_cents: cents,
      amount_formatted: usd(cents),
      reason: text,
      staff: { user_id: staff.userId, name: row.name },
      ledger_transaction_id: transactionId,
      created_at: isoSeconds(new Date(now)),
      balance_cents: after,
    };
  });
}
