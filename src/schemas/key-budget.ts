import { z } from 'zod';
import { typedUsdCents } from './usd.js';

// A spending key's budget as a person writes it (docs/budgets.md), read alike by the admin CLI's
// `key create`/`key update` flags and the console's key form and key page. The limits' own rule
// (whole cents, 0 to $10,000,000.00) and "the expiry must be in the future" stay the domain's
// (createKey, updateKey in src/domain/keys/key-service.ts).

/** The most a key's budget limit may be, in dollars (the domain's MAX_LIMIT_CENTS). */
export const MAX_LIMIT_USD = 10_000_000;

export const usdLimitMessage = `must be an amount of US dollars from 0 to ${MAX_LIMIT_USD.toLocaleString('en-US')} (such as 200 or 12.50)`;

/** US dollars as typed (200, 12.5, 1,500, 0.015), as cents rounded half up like every `*_usd` input. */
export const usdLimit = typedUsdCents(usdLimitMessage).refine((cents) => cents <= MAX_LIMIT_USD * 100, usdLimitMessage);

/** A limit that may be left empty (no limit: null), as the OAuth consent form's are. */
export const optionalUsdLimit = (message: string) =>
  z
    .string()
    .trim()
    .transform((v, ctx) => {
      if (v === '') return null;
      const cents = usdLimit.safeParse(v);
      if (cents.success) return cents.data;
      ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    });

export const expiryDateMessage = 'must be a date such as 2027-01-31';

/** A calendar date (2027-01-31): the key stops at 00:00:00Z of that day. */
export const expiryDate = z
  .string()
  .trim()
  .regex(/^\d{4}-\d{2}-\d{2}$/, expiryDateMessage)
  .transform((v, ctx) => {
    const at = new Date(`${v}T00:00:00Z`);
    // `2027-02-30` parses as 2 March: a date that does not read back as written does not exist.
    if (Number.isNaN(at.getTime()) || at.toISOString().slice(0, 10) !== v) {
      ctx.addIssue({ code: 'custom', message: expiryDateMessage });
      return z.NEVER;
    }
    return at;
  });
