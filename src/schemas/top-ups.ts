import { z } from 'zod';
import { topUpStatuses } from '../common/enums.js';
import { pageQuery } from './pagination.js';
import { typedUsd, usdAmount } from './usd.js';

// Adding funds (docs/billing.md): a workspace's top-up requests, read and written by the API and
// the console alike, and the staff's forms of the operations console.

export const topUpRequestBody = z.strictObject({
  amount_usd: usdAmount().describe('What to add, in US dollars (rounded half up to the cent), within the service\'s limits (TOPUP_MIN_CENTS, TOPUP_MAX_CENTS).'),
});

export const topUpRequest = z
  .object({
    id: z.number().int(),
    reference: z.string().describe('What the payment must carry, e.g. TU-7KQ4-M2XD: the bank transfer\'s description. Unique.'),
    status: z
      .enum(topUpStatuses)
      .describe('pending: waiting for the money; confirmed: received and added to the balance (received_cents); cancelled: withdrawn by the workspace; rejected: refused by staff (reject_reason).'),
    provider: z.string().describe('How it is paid: bank_transfer.'),
    amount_cents: z.number().int().describe('US cents asked for.'),
    amount_formatted: z.string().describe('In US dollars, the currency top-ups are paid in.'),
    received_cents: z.number().int().nullable().describe('confirmed: the US cents received and credited, which may differ from amount_cents.'),
    received_formatted: z.string().nullable(),
    instructions: z.string().describe('How to pay, as given when the request was made.'),
    invoice_url: z.string().describe("The console's printable invoice of this request."),
    requested_by: z.object({ kind: z.enum(['person', 'key']), id: z.number().int(), name: z.string() }).describe('A person in the console, or an API key.'),
    requested_at: z.string(),
    decided_at: z.string().nullable().describe('When it was confirmed, cancelled or rejected.'),
    reject_reason: z.string().nullable(),
  })
  .meta({ id: 'TopUpRequest', description: 'A request to add funds: pay it with its reference; the balance grows once staff confirm the money received (docs/billing.md).' });

export const topUpListQuery = z.strictObject({
  ...pageQuery,
  status: z.enum(topUpStatuses).optional().describe('Only requests in this status.'),
});

// The console's forms, whose fields arrive as text: an amount is typed as every form's is (250,
// 99.50, 1,250) and judged by the same rule as `amount_usd`.
const usdText = z
  .string({ error: 'is required' })
  .trim()
  .min(1, 'is required')
  .pipe(typedUsd('must be a number of US dollars such as 150 or 99.50'))
  .pipe(usdAmount());
const reasonText = z.string({ error: 'is required' }).trim().min(1, 'is required').max(1000, 'must be at most 1,000 characters');

/** "Add funds" in the console: the amount, as `POST /api/v1/top-ups` takes it. */
export const topUpRequestForm = z.object({ amount_usd: usdText });

/** Staff confirming the money received (the operations console). */
export const confirmTopUpForm = z.object({ received_usd: usdText });

/** Staff rejecting a request: the reason, which the workspace reads. */
export const rejectTopUpForm = z.object({ reason: reasonText });

/** A staff adjustment of a workspace's available balance: which way, how much, and why. */
export const adjustmentForm = z.object({
  direction: z.enum(['credit', 'debit'], { error: 'must be credit or debit' }),
  amount_usd: usdText,
  reason: reasonText,
});

export const balanceToppedUpData = z
  .object({
    workspace_id: z.number().int(),
    amount: z.number().int().describe('US cents added: what was received.'),
    amount_formatted: z.string().describe('In the workspace currency, as balances are shown.'),
    balance: z.number().int().describe('The available balance after it, in US cents.'),
    balance_formatted: z.string(),
    top_up: topUpRequest.describe('The request as GET /api/v1/top-ups/{id} showed it right after.'),
    confirmed_by_user_id: z.number().int().nullable().describe("The operator's staff member who confirmed the money received."),
  })
  .meta({ id: 'BalanceToppedUp', description: 'The money of a top-up request arrived and was added to the available balance.' });

export const balanceAdjustedData = z
  .object({
    workspace_id: z.number().int(),
    adjustment_id: z.number().int(),
    amount: z.number().int().describe('US cents: positive for a credit, negative for a debit.'),
    amount_formatted: z.string(),
    balance: z.number().int().describe('The available balance after it, in US cents.'),
    balance_formatted: z.string(),
    reason: z.string().describe('Why, as the staff member wrote it.'),
    adjusted_by_user_id: z.number().int().describe("The operator's staff member who made it."),
  })
  .meta({ id: 'BalanceAdjusted', description: "The operator's staff credited or debited the available balance by hand, with a reason." });
