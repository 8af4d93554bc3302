import { withTransaction, type Db } from '../../db/handle.js';
import { conflict, invalidInput, notFound } from '../errors.js';
import { refuseUnstorableText } from '../text-input.js';
import { requireStaff, type Staff } from '../users/staff.js';
import type { BillingDeps } from './billing-deps.js';
import { staffReason } from './confirm.js';
import { openDetails } from './payout-details.js';
import { PAYOUT_COLUMNS, PAYOUT_JOINS, type OpsPayoutView, opsPayoutView, type PayoutRow } from './payout-view.js';
import { readPayout, settle } from './payout-settle.js';
import { newBatchReference } from './reference.js';

// Staff deciding payouts (docs/billing.md, "Payouts"): one marked sent with the bank's reference
// (in_payout → external) or failed with a reason (in_payout → payable, the publisher's again); the
// pending ones gathered into a batch, exported as CSV for the bank and marked sent together. Each
// is one transaction that locks the payouts first, so two staff pressing at once take turns and
// the second meets the new status (409); each records who did it.

/** The longest bank reference kept. */
const MAX_BANK_REFERENCE = 200;

/** Only a pending payout is sent or failed; anything else is a 409 naming its status. */
function requirePendingPayout(row: Pick<PayoutRow, 'status'>, doing: string): void {
  if (row.status !== 'pending') throw conflict(`Cannot ${doing}: the payout is ${row.status}.`, row.status);
}

/** A bank's reference as staff typed it: trimmed, required, at most 200 characters; a 422 naming `field`. */
export function bankReference(typed: string, field = 'bank_reference'): string {
  const text = typed.trim();
  if (text === '') throw invalidInput({ [field]: ['is required'] });
  if (text.length > MAX_BANK_REFERENCE) throw invalidInput({ [field]: [`must be at most ${MAX_BANK_REFERENCE} characters`] });
  refuseUnstorableText({ [field]: text }, 'form');
  return text;
}

/** Staff sent one payout from the bank: recorded with the bank's reference, once. */
export async function markPayoutSent(deps: BillingDeps, staff: Staff, id: number, typedReference: string): Promise<OpsPayoutView> {
  const bankRef = bankReference(typedReference);
  return withTransaction(deps.pool, async (tx) => {
    const now = deps.clock.now();
    await requireStaff(tx, staff, 'Payout');
    const row = await readPayout(tx, id, null, true);
    requirePendingPayout(row, 'mark it sent');
    const s = await deps.provider.settlePayout({ kind: 'staff', staffUserId: staff.userId, reference: row.reference, outcome: { state: 'sent', bankReference: bankRef } });
    await settle(tx, row, s, now);
    return opsPayoutView(await readPayout(tx, id, null));
  });
}

/** Staff mark a payout failed (the bank refused it, the account is closed): the money goes back to payable, with the reason the publisher reads. */
export async function markPayoutFailed(deps: BillingDeps, staff: Staff, id: number, typedReason: string): Promise<OpsPayoutView> {
  const reason = staffReason(typedReason);
  return withTransaction(deps.pool, async (tx) => {
    const now = deps.clock.now();
    await requireStaff(tx, staff, 'Payout');
    const row = await readPayout(tx, id, null, true);
    requirePendingPayout(row, 'mark it failed');
    const s = await deps.provider.settlePayout({ kind: 'staff', staffUserId: staff.userId, reference: row.reference, outcome: { state: 'failed', reason } });
    await settle(tx, row, s, now);
    return opsPayoutView(await readPayout(tx, id, null));
  });
}

/** The payouts waiting to be sent, oldest first: the staff's queue. */
export async function pendingPayouts(db: Db): Promise<OpsPayoutView[]> {
  const { rows } = await db.query<PayoutRow>({
    name: 'ops_payouts_pending',
    text: `SELECT ${PAYOUT_COLUMNS} FROM payouts p ${PAYOUT_JOINS} WHERE p.status = 'pending' ORDER BY p.id LIMIT 500`,
  });
  return rows.map(opsPayoutView);
}

/** One payout as staff see it. */
export async function opsPayout(db: Db, id: number): Promise<OpsPayoutView> {
  return opsPayoutView(await readPayout(db, id, null));
}

/**
 * Gathers every pending payout not in a batch yet into a new batch, for the bank's file: answers
 * its reference, or null when nothing waits. The rows are locked, so a payout marked meanwhile is
 * left out, and two staff at once make two batches of different payouts.
 */
export async function makePayoutBatch(deps: BillingDeps, staff: Staff): Promise<string | null> {
  return withTransaction(deps.pool, async (tx) => {
    await requireStaff(tx, staff, 'Payout');
    const reference = newBatchReference();
    const { rowCount } = await tx.query({
      name: 'payout_batch_make',
      text: `UPDATE payouts SET batch_reference = $1 WHERE id IN (SELECT id FROM payouts WHERE status = 'pending' AND batch_reference IS NULL ORDER BY id FOR UPDATE)`,
      values: [reference],
    });
    return rowCount ? reference : null;
  });
}

/** A batch's payouts, oldest first. */
export async function batchPayouts(db: Db, batch: string): Promise<OpsPayoutView[]> {
  const { rows } = await db.query<PayoutRow>({
    name: 'payout_batch_list',
    text: `SELECT ${PAYOUT_COLUMNS} FROM payouts p ${PAYOUT_JOINS} WHERE p.batch_reference = $1 ORDER BY p.id`,
    values: [batch],
  });
  if (rows.length === 0) throw notFound('Batch');
  return rows.map(opsPayoutView);
}

/** The provider's file of a batch's payouts still pending, with their destinations opened: for the bank, never for a log. */
export async function payoutBatchFile(deps: BillingDeps, staff: Staff, batch: string) {
  await requireStaff(deps.pool, staff, 'Batch');
  const { rows } = await deps.pool.query<{ reference: string; amount_cents: number; publisher_id: number; publisher_name: string; destination_sealed: string }>({
    name: 'payout_batch_lines',
    text: `SELECT p.reference, p.amount_cents, p.publisher_id, pub.name AS publisher_name, p.destination_sealed
             FROM payouts p JOIN publishers pub ON pub.id = p.publisher_id WHERE p.batch_reference = $1 AND p.status = 'pending' ORDER BY p.id`,
    values: [batch],
  });
  const lines = [];
  for (const r of rows) {
    lines.push({ reference: r.reference, amountCents: r.amount_cents, publisher: { id: r.publisher_id, name: r.publisher_name }, details: await openDetails(deps.secrets, r.destination_sealed) });
  }
  const file = deps.provider.payoutBatchFile(batch, lines);
  if (!file) throw notFound('Batch file');
  return file;
}

/**
 * Staff sent a batch from the bank: each payout of it still pending is marked sent with the bank's
 * reference, in one transaction (the payouts locked in id order); those failed or sent meanwhile
 * are left as they are. Answers how many were marked.
 */
export async function markBatchSent(deps: BillingDeps, staff: Staff, batch: string, typedReference: string): Promise<{ sent: number }> {
  const bankRef = bankReference(typedReference);
  return withTransaction(deps.pool, async (tx) => {
    const now = deps.clock.now();
    await requireStaff(tx, staff, 'Batch');
    const { rows } = await tx.query<PayoutRow>({
      name: 'payout_batch_lock',
      text: `SELECT ${PAYOUT_COLUMNS} FROM payouts p ${PAYOUT_JOINS} WHERE p.batch_reference = $1 ORDER BY p.id FOR UPDATE OF p`,
      values: [batch],
    });
    if (rows.length === 0) throw notFound('Batch');
    let sent = 0;
    for (const row of rows.filter((r) => r.status === 'pending')) {
      const s = await deps.provider.settlePayout({ kind: 'staff', staffUserId: staff.userId, reference: row.reference, outcome: { state: 'sent', bankReference: bankRef } });
      await settle(tx, row, s, now);
      sent++;
    }
    if (sent === 0) throw conflict('Cannot mark the batch sent: none of its payouts is pending.', 'settled');
    return { sent };
  });
}
