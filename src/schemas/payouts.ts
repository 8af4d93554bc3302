import { z } from 'zod';
import { csvColumns } from './csv.js';
import { payoutMethods, payoutStatuses } from '../common/enums.js';
import { compactIban, ibanIsValid } from '../domain/billing/payout-details.js';
import type { PayoutDetails } from '../domain/billing/provider.js';
import { pageQuery } from './pagination.js';

// Payouts (docs/billing.md): a publisher's payouts as the publisher API and the console show them,
// where the publisher is paid (masked), the forms of the console, and the `payout.*` events' data.

export const payout = z
  .object({
    id: z.number().int(),
    reference: z.string().describe('PO-7KQ4-M2XD: the description the transfer carries. Unique.'),
    status: z.enum(payoutStatuses).describe('pending: asked for, the money held in payout; sent: sent by the operator (sent_reference); failed: not sent, the money back in payable (failure_reason).'),
    provider: z.string().describe('How it is sent: bank_transfer.'),
    amount_cents: z.number().int().describe('US cents: the whole payable balance when it was asked for.'),
    amount_formatted: z.string().describe('In US dollars, the currency payouts are made in.'),
    method: z.enum(payoutMethods),
    destination: z.string().describe('Where it goes, masked (e.g. "Bank account of Jane Doe, IBAN DE•• ending 3000").'),
    requested_by: z.object({ id: z.number().int(), name: z.string() }).describe("The publisher's owner who asked."),
    requested_at: z.string(),
    decided_at: z.string().nullable().describe('When it was marked sent or failed.'),
    sent_reference: z.string().nullable().describe("The bank's reference of the transfer, once sent."),
    failure_reason: z.string().nullable(),
  })
  .meta({ id: 'Payout', description: "A payout of the publisher's payable balance (docs/billing.md)." });

export const payoutListQuery = z.strictObject({
  ...pageQuery,
  status: z.enum(payoutStatuses).optional().describe('Only payouts in this status.'),
});

export const payoutDestination = z
  .object({
    method: z.enum(payoutMethods),
    masked: z.string(),
    updated_by: z.object({ id: z.number().int(), name: z.string() }),
    updated_at: z.string(),
  })
  .meta({ id: 'PayoutDestination', description: 'Where the publisher is paid, masked: the details are sealed at rest and never shown again.' });

export const payoutSummary = z.object({
  payable: z.number().int(),
  payable_formatted: z.string(),
  in_payout: z.number().int().describe('US cents asked for and not sent yet.'),
  in_payout_formatted: z.string(),
  minimum_cents: z.number().int().describe('The smallest payout (PAYOUT_MIN_CENTS).'),
  minimum_formatted: z.string(),
  destination: payoutDestination.nullable(),
});

const text = (max: number) => z.string().trim().max(max, `must be at most ${max} characters`).optional().default('');

/**
 * "Where we pay you" in the console: a bank account (the holder, and an IBAN or an account and a
 * routing number) or a PayPal address, each field named in its refusal.
 */
export const payoutDestinationForm = z
  .object({
    method: z.enum(payoutMethods, { error: 'must be bank or paypal' }),
    holder: text(140),
    iban: text(60),
    account_number: text(40),
    routing_number: text(40),
    paypal_email: text(254),
  })
  .transform((f, ctx): PayoutDetails => {
    const fail = (path: string, message: string) => {
      ctx.addIssue({ code: 'custom', path: [path], message });
      return z.NEVER;
    };
    if (f.method === 'paypal') {
      if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(f.paypal_email)) return fail('paypal_email', f.paypal_email ? 'must be an email address' : 'is required');
      return { method: 'paypal', email: f.paypal_email };
    }
    if (f.holder === '') return fail('holder', 'is required');
    const iban = compactIban(f.iban);
    if (iban !== '') {
      if (!ibanIsValid(iban)) return fail('iban', 'is not a valid IBAN (its check digits do not match)');
      return { method: 'bank', holder: f.holder, iban };
    }
    const account = f.account_number.replace(/[\s-]/g, '');
    const routing = f.routing_number.replace(/[\s-]/g, '');
    if (account === '' && routing === '') return fail('iban', 'give an IBAN, or an account number and a routing number');
    if (!/^[0-9]{4,17}$/.test(account)) return fail('account_number', 'must be 4 to 17 digits');
    if (!/^[0-9]{9}$/.test(routing)) return fail('routing_number', 'must be 9 digits');
    return { method: 'bank', holder: f.holder, account_number: account, routing_number: routing };
  });

/** Staff marking a payout (or a batch) sent: the bank's reference. */
export const payoutSentForm = z.object({ bank_reference: z.string({ error: 'is required' }).trim().min(1, 'is required').max(200, 'must be at most 200 characters') });

/** Staff marking a payout failed: the reason, which the publisher reads. */
export const payoutFailedForm = z.object({ reason: z.string({ error: 'is required' }).trim().min(1, 'is required').max(1000, 'must be at most 1,000 characters') });

export const payoutEventData = z
  .object({
    publisher_id: z.number().int(),
    payout: payout.describe('The payout as GET /api/v1/publisher/payouts/{id} showed it right after.'),
    payable: z.number().int().describe('The payable balance after it, in US cents.'),
    payable_formatted: z.string(),
    by_user_id: z.number().int().nullable().describe("Who did it: the publisher's owner who asked, or the operator's staff member who marked it; null when the provider settled it by itself."),
  })
  .meta({ id: 'PayoutEvent', description: 'A payout asked for (payout.requested), sent (payout.sent), or failed with its money back in payable (payout.failed).' });

/** The payouts list's CSV columns (docs/http.md), named as its JSON fields. */
export const payoutCsvColumns = csvColumns(payout);
