import { char, numeric, pgTable, timestamp } from 'drizzle-orm/pg-core';

/** Units of `currency` per 1 USD; every amount is stored in USD cents and converted for display. */
export const fxRates = pgTable('fx_rates', {
  currency: char('currency', { length: 3 }).primaryKey(),
  perUsd: numeric('per_usd', { precision: 18, scale: 8 }).notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});
