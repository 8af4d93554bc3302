import type { PayoutStatus } from '../../common/enums.js';
import { isoSeconds } from '../../common/iso-seconds.js';
import { usd } from './top-up-view.js';

/** A payout as every read selects it (`PAYOUT_COLUMNS` from `payouts p` and `PAYOUT_JOINS`). */
export interface PayoutRow {
  id: number;
  publisher_id: number;
  publisher_name: string;
  reference: string;
  provider: string;
  status: PayoutStatus;
  amount_cents: number;
  method: 'bank' | 'paypal';
  destination_masked: string;
  requested_by_user_id: number;
  requested_by_name: string;
  requested_at: Date;
  ledger_transaction_id: number;
  batch_reference: string | null;
  decided_by_user_id: number | null;
  decided_by_name: string | null;
  decided_at: Date | null;
  sent_reference: string | null;
  failure_reason: string | null;
  decided_ledger_transaction_id: number | null;
}

export const PAYOUT_COLUMNS = `p.id, p.publisher_id, pub.name AS publisher_name, p.reference, p.provider, p.status, p.amount_cents, p.method,
       p.destination_masked, p.requested_by_user_id, ru.name AS requested_by_name, p.requested_at, p.ledger_transaction_id,
       p.batch_reference, p.decided_by_user_id, du.name AS decided_by_name, p.decided_at, p.sent_reference, p.failure_reason,
       p.decided_ledger_transaction_id`;
export const PAYOUT_JOINS = `JOIN publishers pub ON pub.id = p.publisher_id
  JOIN users ru ON ru.id = p.requested_by_user_id
  LEFT JOIN users du ON du.id = p.decided_by_user_id`;

/** A payout as the publisher sees it (the API, the console, the events). Payouts are in US dollars, the ledger's currency. */
export function payoutView(r: PayoutRow) {
  return {
    id: r.id,
    reference: r.reference,
    status: r.status,
    provider: r.provider,
    amount_cents: r.amount_cents,
    amount_formatted: usd(r.amount_cents),
    method: r.method,
    destination: r.destination_masked,
    requested_by: { id: r.requested_by_user_id, name: r.requested_by_name },
    requested_at: isoSeconds(r.requested_at),
    decided_at: r.decided_at ? isoSeconds(r.decided_at) : null,
    sent_reference: r.sent_reference,
    failure_reason: r.failure_reason,
  };
}
export type PayoutView = ReturnType<typeof payoutView>;

/** A payout as staff see it: the publisher's view, with the publisher, the batch, who decided and the ledger's transactions. */
export function opsPayoutView(r: PayoutRow) {
  return {
    ...payoutView(r),
    publisher: { id: r.publisher_id, name: r.publisher_name },
    batch_reference: r.batch_reference,
    decided_by: r.decided_by_user_id !== null ? { user_id: r.decided_by_user_id, name: r.decided_by_name ?? '' } : null,
    ledger_transaction_id: r.ledger_transaction_id,
    decided_ledger_transaction_id: r.decided_ledger_transaction_id,
  };
}
export type OpsPayoutView = ReturnType<typeof opsPayoutView>;
