import { z } from 'zod';
import { usdToCents } from '../domain/money/format.js';

/**
 * An amount in decimal US dollars, as every `*_usd` input takes it (REST and MCP alike): above 0,
 * at most 10,000,000, and at least a cent once rounded half-up to cents, since 0.004 would become
 * the 0 that is refused.
 */
export const usdAmount = (typeMessage = 'must be a number of US dollars') =>
  z
    .number({ error: (issue) => (issue.input === undefined ? 'is required' : typeMessage) })
    .gt(0, { error: 'must be greater than 0', abort: true })
    .max(10_000_000, 'must be at most 10,000,000')
    .refine((usd) => usdToCents(usd) >= 1, 'must be at least 0.01');

/** The same amount written in a query string (150, 99.50). */
export const usdQueryParam = z
  .string()
  .regex(/^\d+(\.\d+)?$/, 'must be a number of US dollars such as 150 or 99.50')
  .transform(Number)
  .pipe(usdAmount());

// Commas only between thousands (1,250.50): a person's way of writing a large amount.
const TYPED_USD = /^(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?$/;

/**
 * US dollars as a person types them into a console form or a CLI flag (250, 250.50, 1,250.50), as
 * a number of dollars: every form that takes an amount reads it with this one rule, then judges it
 * as its field does.
 */
export const typedUsd = (message: string) =>
  z
    .string()
    .trim()
    .regex(TYPED_USD, message)
    .transform((v) => Number(v.replaceAll(',', '')));

/** The same, in US cents, rounded half up to the cent as every `*_usd` input. */
export const typedUsdCents = (message: string) => typedUsd(message).transform(usdToCents);
