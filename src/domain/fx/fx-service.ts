import { asc, sql } from 'drizzle-orm';
import { type Db, orm } from '../../db/handle.js';
import { fxRates } from '../../db/schema/index.js';
import { invalidInput } from '../errors.js';

/** Sets how many units of `currency` one US dollar buys; amounts are shown converted by it. */
export async function setFxRate(db: Db, currency: string, perUsd: number) {
  const code = currency.toUpperCase();
  if (!/^[A-Z]{3}$/.test(code)) throw invalidInput({ currency: ['must be a three-letter currency code'] });
  if (!Number.isFinite(perUsd) || perUsd <= 0 || perUsd > 1e9) {
    throw invalidInput({ per_usd: ['must be a positive number'] });
  }
  if (!Intl.supportedValuesOf('currency').includes(code)) {
    throw invalidInput({ currency: [`${code} is not an ISO 4217 currency`] });
  }
  // Rates are units per US dollar and balances are US cents: a USD rate other than 1 would show
  // every USD workspace a balance it does not have.
  if (code === 'USD' && perUsd !== 1) throw invalidInput({ per_usd: ['must be 1 for USD: rates are units of a currency per US dollar'] });
  const [stored] = await orm(db)
    .insert(fxRates)
    .values({ currency: code, perUsd: String(perUsd) })
    .onConflictDoUpdate({ target: fxRates.currency, set: { perUsd: String(perUsd), updatedAt: sql`now()` } })
    .returning({ perUsd: fxRates.perUsd });
  // What was stored (8 decimals), not what was asked.
  return { currency: code, per_usd: Number(stored!.perUsd) };
}

/** The FX table: every currency a workspace or an item may use, with its rate per US dollar. */
export async function listFxRates(db: Db) {
  const rows = await orm(db).select({ currency: fxRates.currency, perUsd: fxRates.perUsd }).from(fxRates).orderBy(asc(fxRates.currency));
  return rows.map((r) => ({ currency: r.currency, per_usd: Number(r.perUsd) }));
}
