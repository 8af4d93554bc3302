// The one interface money goes through on its way in (top-ups) and out (payouts), whatever moves
// it: a bank transfer that the operator's staff confirm by hand (bank-transfer.ts, the provider
// today), or a card processor and its payouts (docs/billing.md designs one on paper). The domain
// keeps the rules (limits, states, the ledger, events); a provider only says how the payer pays,
// vouches for money received, and sends money out.

/** A top-up request about to be made: what the provider is told to give its instructions for. */
export interface TopUpStart {
  /** What the payment must carry ("TU-7KQ4-M2XD"), unique. */
  reference: string;
  /** US cents asked for. */
  amountCents: number;
  /** The same, as the payer reads it ("$250.00"). */
  amountFormatted: string;
  workspace: { id: number; name: string };
}

/** What the payer is told to do. */
export interface TopUpInstructions {
  /** Plain text, shown on the request's page and its invoice. */
  instructions: string;
  /** A page where the payer pays (a card checkout); null when there is none (a bank transfer). */
  payUrl: string | null;
}

/**
 * What proves money arrived for a top-up, as it reaches the service: a staff member who read it
 * on the bank statement, or a provider's signed notification (a card's webhook).
 */
export type TopUpEvidence =
  | { kind: 'staff'; staffUserId: number; reference: string; receivedCents: number }
  | { kind: 'webhook'; body: string; headers: Record<string, string | undefined> };

/** Money received, vouched for by the provider: the domain credits it once, by reference. */
export interface TopUpReceipt {
  reference: string;
  receivedCents: number;
  /** Who confirmed it: a staff member (recorded on the request and in the event), or the provider's event id. */
  confirmedBy: { staffUserId: number } | { providerEventId: string };
}

/** Money to send to a publisher (docs/billing.md, "Payouts"): handed to the provider once the owner asked. */
export interface PayoutStart {
  reference: string;
  amountCents: number;
  publisher: { id: number; name: string };
}

/** What became of a payout handed to the provider. */
export type PayoutOutcome =
  /** Sent by the provider itself (a Connect transfer), with its own reference. */
  | { state: 'sent'; providerReference: string }
  /** Nothing sent by code: staff send it (a bank transfer) and record its reference by hand. */
  | { state: 'manual' };

/**
 * What tells the service a payout left or failed: a staff member who sent it from the bank (or
 * saw it come back), or a provider's signed notification (Connect's `payout.failed`).
 */
export type PayoutEvidence =
  | { kind: 'staff'; staffUserId: number; reference: string; outcome: { state: 'sent'; bankReference: string } | { state: 'failed'; reason: string } }
  | { kind: 'webhook'; body: string; headers: Record<string, string | undefined> };

/** A payout's end, vouched for by the provider: the domain applies it once, by reference. */
export type PayoutSettlement = {
  reference: string;
  /** A staff member (recorded on the payout and in the event), or the provider's event id. */
  settledBy: { staffUserId: number } | { providerEventId: string };
} & ({ state: 'sent'; providerReference: string } | { state: 'failed'; reason: string });

/** One payout of a batch file, with its destination opened (the file goes to the bank, never to a log). */
export interface PayoutLine {
  reference: string;
  amountCents: number;
  publisher: { id: number; name: string };
  details: PayoutDetails;
}

/** Where a publisher is paid, as its owner gave it (sealed at rest: docs/billing.md). */
export type PayoutDetails =
  | { method: 'bank'; holder: string; iban: string }
  | { method: 'bank'; holder: string; account_number: string; routing_number: string }
  | { method: 'paypal'; email: string };

export interface PaymentProvider {
  /** Stored with each request (`top_up_requests.provider`). */
  readonly id: string;
  /** How people read it: "Bank transfer". */
  readonly label: string;
  /** Who confirms money received: the operator's staff, or the provider's own notification. */
  readonly confirmedBy: 'staff' | 'provider';
  /**
   * The instructions for a new request. Called before the request is written; a provider that
   * calls out (a card checkout session) must be called outside any database transaction.
   */
  createTopUp(start: TopUpStart): Promise<TopUpInstructions>;
  /** Turns evidence into a receipt, or refuses it (a bad signature, staff on a provider that confirms itself). */
  confirmTopUp(evidence: TopUpEvidence): Promise<TopUpReceipt>;
  /** A pending request withdrawn or rejected: the provider stops taking money for it (a card session expired). */
  cancelTopUp(reference: string): Promise<void>;
  /** Money out to a publisher, called once the payout is asked for (and written): sent by code, or left to staff. */
  sendPayout(payout: PayoutStart): Promise<PayoutOutcome>;
  /** Turns evidence into a payout's end (sent, or failed with a reason), or refuses it. */
  settlePayout(evidence: PayoutEvidence): Promise<PayoutSettlement>;
  /** The file staff hand the bank for a batch of payouts, or null when the provider sends them itself. */
  payoutBatchFile(batchReference: string, lines: PayoutLine[]): { filename: string; contentType: string; body: string } | null;
}
