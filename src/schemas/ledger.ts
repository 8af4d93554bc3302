import { z } from 'zod';
import { csvColumns } from './csv.js';

export const ledgerEntry = z.object({
  id: z.number().int(),
  transaction_id: z.number().int().describe('Entries of one transaction sum to zero across all accounts.'),
  account: z.enum(['available', 'held']),
  amount: z.number().int().describe('US cents; positive when the account grew.'),
  amount_formatted: z.string(),
  kind: z
    .enum(['top_up', 'order_placed', 'order_released', 'order_refunded', 'guarantee_refunded', 'adjustment'])
    .describe('guarantee_refunded: a lost link not restored in time, the full price back (docs/link-guarantee.md); adjustment: credited or debited by the operator\'s staff, with a reason (docs/billing.md).'),
  order_id: z.number().int().nullable(),
  created_at: z.string(),
}).meta({ id: 'LedgerEntry', description: 'One movement of one account; the entries of a transaction sum to zero.' });

/** The CSV export's columns (Accept: text/csv on GET /api/v1/ledger): the list's JSON fields. */
export const ledgerCsvColumns = csvColumns(ledgerEntry);
