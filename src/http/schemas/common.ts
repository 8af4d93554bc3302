import { z } from 'zod';
import { errorCodes } from '../../domain/errors.js';

export const errorBody = z
  .object({
    message: z.string().describe('A human sentence saying what went wrong.'),
    code: z.enum(errorCodes).describe('Stable machine-readable code.'),
    request_id: z.string().describe('Echoes X-Request-Id; quote it when reporting a problem.'),
    errors: z
      .record(z.string(), z.array(z.string()))
      .optional()
      .describe('422 only: every bad field path with what is wrong with it.'),
    needed_cents: z.number().int().optional().describe('402 only: how many more cents the balance needs.'),
    retry_after: z.number().int().optional().describe('429 only: seconds until the window resets.'),
    status: z.string().optional().describe('409 only: the order status now.'),
  })
  .passthrough()
  .describe('Error');

const errorDescriptions = {
  400: 'Unparseable JSON, wrong Content-Type, or a missing Idempotency-Key.',
  401: 'Missing, malformed, unknown or revoked key (WWW-Authenticate: Bearer).',
  402: 'Balance too low; carries needed_cents.',
  403: 'The key cannot do this (not a spending key, wrong kind of key, or over the approval limit).',
  404: 'Not found for this workspace.',
  409: 'The order has moved on (carries its status), or the same Idempotency-Key is still running.',
  413: 'Body over 1 MB.',
  422: 'Invalid input; errors names each bad field.',
  429: 'Rate limit exceeded; see Retry-After.',
  503: 'The database is unreachable; retry shortly.',
} as const;

export type ErrorStatus = keyof typeof errorDescriptions;

/** OpenAPI error responses for a route: the given statuses plus those every route can answer. */
export function errorResponses(...statuses: ErrorStatus[]) {
  const all = new Set<ErrorStatus>([...statuses, 429, 503]);
  return Object.fromEntries(
    [...all].sort().map((s) => [s, errorBody.describe(errorDescriptions[s])]),
  ) as Record<ErrorStatus, typeof errorBody>;
}

/** Error responses of every authenticated Interface A route. */
export const authErrors = [401, 403] as const;

export const bearerSecurity = [{ bearerAuth: [] }];
