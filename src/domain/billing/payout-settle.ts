import type { Db } from '../../db/handle.js';
import { notFound } from '../errors.js';
import { recordEvents } from '../events/record.js';
import { payoutFailed, payoutSent, platformAccount, post } from '../ledger/ledger.js';
import { PAYOUT_COLUMNS, PAYOUT_JOINS, type PayoutRow, type PayoutView, payoutView } from './payout-view.js';
import type { PayoutSettlement } from './provider.js';
import { usd } from './top-up-view.js';

// What asking for a payout and deciding one share (docs/billing.md, "Payouts"): reading a payout,
// the publisher's payout accounts locked in the ledger's order, and a settlement applied (the
// ledger's movement, the row, the event), whoever settled it: staff, or a provider by itself.

/** The `payout.*` events' data: the payout as the publisher reads it, and who did it. */
export interface PayoutEventData {
  publisher_id: number;
  payout: PayoutView;
  payable: number;
  payable_formatted: string;
  /** Null when the provider settled it by itself (a Connect transfer's event). */
  by_user_id: number | null;
}

export async function readPayout(db: Db, id: number, publisherId: number | null, lock = false): Promise<PayoutRow> {
  const { rows } = await db.query<PayoutRow>({
    name: lock ? 'payout_lock' : 'payout_get',
    text: `SELECT ${PAYOUT_COLUMNS} FROM payouts p ${PAYOUT_JOINS} WHERE p.id = $1 AND ($2::int IS NULL OR p.publisher_id = $2)${lock ? ' FOR UPDATE OF p' : ''}`,
    values: [id, publisherId],
  });
  if (!rows[0]) throw notFound('Payout');
  return rows[0];
}

/** The publisher's payable and in-payout accounts, locked (payable first: the lock order), made if missing. */
export async function lockPayoutAccounts(tx: Db, publisherId: number): Promise<{ payable: { id: number; balance: number }; inPayout: { id: number; balance: number } }> {
  // Publishers from before payouts have no in_payout account yet: made on first use.
  await tx.query({ name: 'payout_account_make', text: `INSERT INTO ledger_accounts (kind, publisher_id) VALUES ('in_payout', $1) ON CONFLICT DO NOTHING`, values: [publisherId] });
  const { rows } = await tx.query<{ id: number; kind: 'payable' | 'in_payout'; balance: number }>({
    name: 'payout_accounts_lock',
    text: `SELECT id, kind, balance FROM ledger_accounts WHERE publisher_id = $1 AND kind IN ('payable', 'in_payout') ORDER BY kind FOR UPDATE`,
    values: [publisherId],
  });
  const payable = rows.find((r) => r.kind === 'payable');
  const inPayout = rows.find((r) => r.kind === 'in_payout');
  if (!payable || !inPayout) throw notFound('Publisher');
  return { payable, inPayout };
}

/** Applies a settlement to a locked, pending payout: the ledger's movement, the row, and the event, in the caller's transaction. */
export async function settle(tx: Db, row: PayoutRow, s: PayoutSettlement, now: number): Promise<void> {
  const accounts = await lockPayoutAccounts(tx, row.publisher_id);
  const ids = { payable: accounts.payable.id, inPayout: accounts.inPayout.id };
  const movement = s.state === 'sent' ? payoutSent(ids, await platformAccount(tx, 'external'), row.amount_cents) : payoutFailed(ids, row.amount_cents);
  const [transactionId] = await post(tx, [movement]);
  const staffUserId = 'staffUserId' in s.settledBy ? s.settledBy.staffUserId : null;
  await tx.query({
    name: 'payout_settle',
    text: `UPDATE payouts SET status = $2, sent_reference = $3, failure_reason = $4, decided_by_user_id = $5, decided_at = $6, decided_ledger_transaction_id = $7 WHERE id = $1`,
    values: [row.id, s.state, s.state === 'sent' ? s.providerReference : null, s.state === 'failed' ? s.reason : null, staffUserId, new Date(now), transactionId],
  });
  const payable = accounts.payable.balance + (s.state === 'failed' ? row.amount_cents : 0);
  const data: PayoutEventData = {
    publisher_id: row.publisher_id,
    payout: payoutView(await readPayout(tx, row.id, null)),
    payable,
    payable_formatted: usd(payable),
    by_user_id: staffUserId,
  };
  await recordEvents(tx, [{ type: s.state === 'sent' ? 'payout.sent' : 'payout.failed', owner: { party: 'publisher', publisherId: row.publisher_id }, actor: 'system', data }], now);
}
