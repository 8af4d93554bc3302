import type { PayoutStatus } from '../../common/enums.js';
import type { Db } from '../../db/handle.js';
import { DomainError } from '../errors.js';
import { recordEvents } from '../events/record.js';
import { type Kept, type OnceOptions, runOnce } from '../idempotency/record-once.js';
import { payoutRequested, post } from '../ledger/ledger.js';
import { lockPayoutAccounts, type PayoutEventData, readPayout, settle } from './payout-settle.js';
import type { BillingDeps } from './billing-deps.js';
import { requirePayoutOwner, type PayoutActor } from './payout-actor.js';
import { readDestination } from './payout-details.js';
import { PAYOUT_COLUMNS, PAYOUT_JOINS, type PayoutRow, type PayoutView, payoutView } from './payout-view.js';

export type { PayoutEventData } from './payout-settle.js';
import { newPayoutReference } from './reference.js';
import { usd } from './top-up-view.js';

// A publisher asking to be paid (docs/billing.md, "Payouts"): its owner asks for the whole payable
// balance; in the same transaction the money moves from payable into the publisher's `in_payout`
// account and the payout is written, under a lock of the payable row, so two requests at once
// cannot both take it. Staff then send it (payout-decide.ts), or mark it failed (the money back).

/**
 * A payout of the whole payable balance: refused (409, naming why) without a destination or
 * below PAYOUT_MIN_CENTS; else written with the destination as it is now, the ledger's
 * payable → in_payout, and `payout.requested`, in one transaction; then handed to the provider.
 */
export async function requestPayout(deps: BillingDeps, actor: PayoutActor, options: OnceOptions = { once: undefined }): Promise<Kept<PayoutView>> {
  return runOnce(deps, options, async (tx, now) => {
    await requirePayoutOwner(tx, actor);
    const destination = await readDestination(tx, actor.publisherId);
    if (!destination) throw new DomainError('conflict', 'Add where the publisher is paid (a bank account or a PayPal address) before asking for a payout.', { reason: 'no_payout_details' });
    const accounts = await lockPayoutAccounts(tx, actor.publisherId);
    const amount = accounts.payable.balance;
    if (amount < deps.payoutMinCents) {
      throw new DomainError('conflict', `The payable balance (${usd(amount)}) is below the smallest payout, ${usd(deps.payoutMinCents)}.`, { reason: 'below_minimum' });
    }
    const [transactionId] = await post(tx, [payoutRequested({ payable: accounts.payable.id, inPayout: accounts.inPayout.id }, amount)]);
    for (let attempt = 0; attempt < 5; attempt++) {
      const reference = newPayoutReference();
      const inserted = await tx.query<{ id: number }>({
        name: 'payout_insert',
        text: `INSERT INTO payouts (publisher_id, reference, provider, amount_cents, method, destination_sealed, destination_masked, requested_by_user_id, requested_at, ledger_transaction_id)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (reference) DO NOTHING RETURNING id`,
        values: [actor.publisherId, reference, deps.provider.id, amount, destination.method, destination.details_sealed, destination.masked, actor.userId, new Date(now), transactionId],
      });
      const id = inserted.rows[0]?.id;
      if (id === undefined) continue;
      const row = await readPayout(tx, id, actor.publisherId);
      const data: PayoutEventData = { publisher_id: actor.publisherId, payout: payoutView(row), payable: 0, payable_formatted: usd(0), by_user_id: actor.userId };
      await recordEvents(tx, [{ type: 'payout.requested', owner: { party: 'publisher', publisherId: actor.publisherId }, actor: 'publisher', data }], now);
      // The bank transfer answers `manual`: staff send it. A provider that sends by itself is
      // recorded sent at once (docs/billing.md designs Connect, whose call would run after commit).
      const outcome = await deps.provider.sendPayout({ reference, amountCents: amount, publisher: { id: actor.publisherId, name: row.publisher_name } });
      if (outcome.state === 'sent') {
        await settle(tx, row, { reference, settledBy: { providerEventId: outcome.providerReference }, state: 'sent', providerReference: outcome.providerReference }, now);
      }
      return payoutView(await readPayout(tx, id, actor.publisherId));
    }
    throw new Error('five payout references in a row were taken');
  });
}

/** One of the publisher's payouts; another publisher's is not found, as one that does not exist. */
export async function getPayout(db: Db, publisherId: number, id: number): Promise<PayoutView> {
  return payoutView(await readPayout(db, id, publisherId));
}

/** The publisher's payouts, newest first, filtered by status. */
export async function listPayouts(db: Db, publisherId: number, filter: { status?: PayoutStatus | undefined }, page: number, perPage: number): Promise<{ items: PayoutView[]; total: number }> {
  const [list, count] = await Promise.all([
    db.query<PayoutRow>({
      name: 'payout_list',
      text: `SELECT ${PAYOUT_COLUMNS} FROM payouts p ${PAYOUT_JOINS}
              WHERE p.publisher_id = $1 AND ($2::payout_status IS NULL OR p.status = $2)
              ORDER BY p.id DESC LIMIT $3 OFFSET $4`,
      values: [publisherId, filter.status ?? null, perPage, (page - 1) * perPage],
    }),
    db.query<{ n: number }>({
      name: 'payout_count',
      text: `SELECT count(*)::int AS n FROM payouts WHERE publisher_id = $1 AND ($2::payout_status IS NULL OR status = $2)`,
      values: [publisherId, filter.status ?? null],
    }),
  ]);
  return { items: list.rows.map(payoutView), total: count.rows[0]!.n };
}

/**
 * Every payout of the publisher in `filter`, newest first, as `listPayouts` shows them, read in
 * batches by keyset (`p.id <` the last id read): for the CSV export, which streams what this yields.
 */
export async function* eachPayout(db: Db, publisherId: number, filter: { status?: PayoutStatus | undefined }, batch = 200): AsyncGenerator<PayoutView> {
  let after = Number.MAX_SAFE_INTEGER;
  for (;;) {
    const { rows } = await db.query<PayoutRow>({
      name: 'payout_export',
      text: `SELECT ${PAYOUT_COLUMNS} FROM payouts p ${PAYOUT_JOINS}
              WHERE p.publisher_id = $1 AND ($2::payout_status IS NULL OR p.status = $2) AND p.id < $3
              ORDER BY p.id DESC LIMIT $4`,
      values: [publisherId, filter.status ?? null, after, batch],
    });
    for (const r of rows) yield payoutView(r);
    if (rows.length < batch) return;
    after = Number(rows[rows.length - 1]!.id);
  }
}

/** The publisher's payable and in-payout balances, and the smallest payout. */
export async function payoutBalances(db: Db, publisherId: number, minCents: number) {
  const { rows } = await db.query<{ payable: number; in_payout: number }>({
    name: 'payout_balances',
    text: `SELECT COALESCE((SELECT balance FROM ledger_accounts WHERE publisher_id = $1 AND kind = 'payable'), 0)::bigint AS payable,
                  COALESCE((SELECT balance FROM ledger_accounts WHERE publisher_id = $1 AND kind = 'in_payout'), 0)::bigint AS in_payout`,
    values: [publisherId],
  });
  const { payable, in_payout } = rows[0]!;
  return {
    payable: Number(payable),
    payable_formatted: usd(Number(payable)),
    in_payout: Number(in_payout),
    in_payout_formatted: usd(Number(in_payout)),
    minimum_cents: minCents,
    minimum_formatted: usd(minCents),
  };
}
