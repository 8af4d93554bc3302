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
