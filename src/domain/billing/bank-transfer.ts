import { forbidden, invalidInput } from '../errors.js';
import type { PaymentProvider, PayoutEvidence, PayoutLine, PayoutSettlement, TopUpEvidence, TopUpInstructions, TopUpReceipt, TopUpStart } from './provider.js';

/**
 * `{reference}` and `{amount}` put into the operator's text (BILLING_INSTRUCTIONS), and `\n`
 * (backslash, n) made a line break: an environment variable is one line in most .env files.
 */
export function fillInstructions(template: string, start: Pick<TopUpStart, 'reference' | 'amountFormatted'>): string {
  return template.replaceAll('\\n', '\n').replaceAll('{reference}', start.reference).replaceAll('{amount}', start.amountFormatted);
}

/**
 * The provider every marketplace also offers: the payer transfers the money with the request's
 * reference, and the operator's staff, reading the bank statement, confirm the amount received.
 * Nothing here calls out: instructions are the operator's text, a confirmation is staff's word,
 * and a payout is sent by staff from the bank, then recorded.
 */
export function bankTransfer(instructionsTemplate: string): PaymentProvider {
  return {
    id: 'bank_transfer',
    label: 'Bank transfer',
    confirmedBy: 'staff',
    async createTopUp(start: TopUpStart): Promise<TopUpInstructions> {
      return { instructions: fillInstructions(instructionsTemplate, start), payUrl: null };
    },
    async confirmTopUp(evidence: TopUpEvidence): Promise<TopUpReceipt> {
      if (evidence.kind !== 'staff') throw forbidden('A bank transfer is confirmed by staff, not by a notification.');
      if (!Number.isSafeInteger(evidence.receivedCents) || evidence.receivedCents <= 0) {
        throw invalidInput({ received_usd: ['must be an amount above 0'] });
      }
      return { reference: evidence.reference, receivedCents: evidence.receivedCents, confirmedBy: { staffUserId: evidence.staffUserId } };
    },
    async cancelTopUp(): Promise<void> {
      // Nothing to stop: a transfer sent anyway is found by its reference and returned by hand.
    },
    async sendPayout() {
      return { state: 'manual' as const };
    },
    async settlePayout(evidence: PayoutEvidence): Promise<PayoutSettlement> {
      if (evidence.kind !== 'staff') throw forbidden('A bank transfer payout is recorded by staff, not by a notification.');
      const settledBy = { staffUserId: evidence.staffUserId };
      return evidence.outcome.state === 'sent'
        ? { reference: evidence.reference, settledBy, state: 'sent', providerReference: evidence.outcome.bankReference }
        : { reference: evidence.reference, settledBy, state: 'failed', reason: evidence.outcome.reason };
    },
    payoutBatchFile(batchReference: string, lines: PayoutLine[]) {
      return { filename: `${batchReference}.csv`, contentType: 'text/csv; charset=utf-8', body: payoutCsv(lines) };
    },
  };
}

/** The columns of a batch file for the bank: one transfer a line, the payout's reference as its description. */
export const PAYOUT_CSV_COLUMNS = ['reference', 'amount', 'currency', 'method', 'holder', 'iban', 'account_number', 'routing_number', 'paypal_email', 'publisher_id', 'publisher'] as const;

/**
 * A cell of CSV (RFC 4180): quoted when it holds a comma, quote or line break; a value starting
 * with =, +, - or @ gets a leading apostrophe, so a spreadsheet opening the file runs no formula
 * a publisher typed into a name.
 */
export function csvCell(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** The batch as CSV: a header line, then one line a payout, amounts in dollars with two decimals. */
export function payoutCsv(lines: PayoutLine[]): string {
  const rows = lines.map((l) => {
    const d = l.details;
    const bank = d.method === 'bank' ? d : null;
    return [
      l.reference,
      (l.amountCents / 100).toFixed(2),
      'USD',
      d.method,
      bank ? bank.holder : '',
      bank && 'iban' in bank ? bank.iban : '',
      bank && 'account_number' in bank ? bank.account_number : '',
      bank && 'routing_number' in bank ? bank.routing_number : '',
      d.method === 'paypal' ? d.email : '',
      String(l.publisher.id),
      l.publisher.name,
    ];
  });
  return [PAYOUT_CSV_COLUMNS, ...rows].map((r) => r.map(csvCell).join(',')).join('\r\n') + '\r\n';
}
