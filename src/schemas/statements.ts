import { z } from 'zod';

/** A month as the statements name it: YYYY-MM, UTC. */
export const monthText = z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'must be a month written YYYY-MM');

/** GET /statements?month=: the month, YYYY-MM (UTC); the current month when left out. */
export const statementQuery = z.strictObject({
  month: monthText.optional().describe('The month, YYYY-MM (UTC): from its first instant to the next month’s. Default: the current month, so far.'),
});

const cents = (what: string) => z.number().int().describe(`${what}, US cents.`);

const movement = z
  .object({
    entry_id: z.number().int(),
    transaction_id: z.number().int().describe('The ledger transaction; its entries across all accounts sum to zero.'),
    date: z.string().describe('When the entry was written, ISO 8601 UTC.'),
    kind: z
      .string()
      .describe(
        'The ledger transaction kind: top_up, order_placed, order_released, order_refunded, guarantee_refunded, payout_released, adjustment, or a kind added later (the set is open: a statement lists every movement of the ledger).',
      ),
    order_id: z.number().int().nullable(),
    reference: z.string().nullable().describe('A confirmed top-up’s reference (TU-…); null otherwise.'),
    note: z.string().nullable().describe('An adjustment’s reason, as staff wrote it; null otherwise.'),
    amount: cents('Positive when the account grew'),
    amount_formatted: z.string(),
    balance: cents('The account’s balance right after this entry'),
    balance_formatted: z.string(),
  })
  .meta({ id: 'StatementMovement' });

const accountStatement = z
  .object({
    account: z
      .string()
      .describe('The ledger account: available and held (a workspace), pending and payable (a publisher), or an account added later.'),
    opening: cents('The balance at the start of the month'),
    opening_formatted: z.string(),
    credits: cents('The month’s entries that added to it, summed'),
    credits_formatted: z.string(),
    debits: cents('The month’s entries that took from it, summed (zero or negative)'),
    debits_formatted: z.string(),
    closing: cents('opening + credits + debits: the balance at the end of the month (for the current month, now)'),
    closing_formatted: z.string(),
    movements: z.array(movement).describe('Every entry of the month, oldest first.'),
  })
  .meta({ id: 'AccountStatement' });

export const statement = z
  .object({
    owner: z.object({ kind: z.enum(['workspace', 'publisher']), id: z.number().int(), name: z.string() }),
    month: z.string(),
    from: z.string().describe('The month’s first instant, UTC: entries at or after it…'),
    to: z.string().describe('…and before the next month’s first instant.'),
    complete: z.boolean().describe('False for the current month: its closing balances are those so far.'),
    currency: z.literal('USD'),
    accounts: z.array(accountStatement),
    opening: cents('The accounts’ opening balances together'),
    opening_formatted: z.string(),
    closing: cents('The accounts’ closing balances together'),
    closing_formatted: z.string(),
  })
  .meta({
    id: 'Statement',
    description: 'A month of the ledger for a workspace or a publisher (docs/billing.md, "Papers"): per account, the opening balance, every entry, the closing balance.',
  });
