import { forbidden, invalidInput } from '../errors.js';
import type { PaymentProvider, TopUpEvidence, TopUpInstructions, TopUpReceipt, TopUpStart } from './provider.js';

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
  };
}
