import { z } from 'zod';
import { errorCodes } from '../domain/errors.js';

/**
 * Every buyer API error body. Registered in zod's global registry under the id `Error`, so the
 * OpenAPI document holds it once (`#/components/schemas/Error`) and each error response refers to
 * it (see http/plugins/openapi.ts).
 */
export const errorBody = z
  .object({
    message: z.string().describe('A human sentence saying what went wrong.'),
    code: z.enum(errorCodes).describe('Stable machine-readable code.'),
    request_id: z.string().describe('Echoes X-Request-Id; quote it when reporting a problem.'),
    errors: z
      .record(z.string(), z.array(z.string()))
      .optional()
      .describe('422 invalid_input only: each bad field path (at most 20) with what is wrong with it.'),
    errors_omitted: z
      .number()
      .int()
      .optional()
      .describe('422 invalid_input only, when more than 20 fields were bad: how many errors leaves out.'),
    needed_cents: z.number().int().optional().describe('402 only: how many more US cents the balance needs.'),
    needed_formatted: z.string().optional().describe('402 only: needed_cents in the workspace currency.'),
    balance: z.number().int().optional().describe('402 only: the available balance in US cents.'),
    balance_formatted: z.string().optional().describe('402 only: balance in the workspace currency.'),
    retry_after: z.number().int().optional().describe('429 only: seconds until the window resets (also in Retry-After).'),
    status: z.string().optional().describe('409 conflict only: the order status now.'),
    total_cents: z.number().int().optional().describe('403 approval_required only: what the refused order totals, in US cents.'),
    max_order_cents: z.number().int().optional().describe("403 approval_required only: the workspace's approval limit, in US cents."),
    budget: z
      .object({
        window: z.enum(['order', 'day', 'month']).describe('Which limit refused the order: per order, the UTC day, or the UTC month.'),
        limit_cents: z.number().int().describe('The limit, in US cents.'),
        spent_cents: z.number().int().describe("What the key spent in the window before this order (for `order`: this order's total), in US cents."),
        remaining_cents: z.number().int().describe('What is left in the window, in US cents (never negative).'),
        resets_at: z.iso.datetime().nullable().describe('When the window starts again (UTC midnight, or the first of next month); null for `order`.'),
        limit_formatted: z.string(),
        spent_formatted: z.string(),
        remaining_formatted: z.string(),
      })
      .optional()
      .describe("403 budget_exceeded only: the key's budget that refused the order (docs/budgets.md)."),
  })
  .loose()
  .meta({
    id: 'Error',
    description:
      'Every error answer of the buyer API. Fields beyond message, code and request_id appear only with the codes that name them.',
  });

const errorDescriptions = {
  400:
    'Unparseable JSON, a body that is not UTF-8, names a member twice, holds a __proto__ key, nests more than 32 levels or ' +
    'holds more than 10,000 members and elements, wrong Content-Type, or a ' +
    'malformed Idempotency-Key (1–255 visible ASCII characters, sent once).',
  401: 'Missing, malformed, unknown or revoked key (WWW-Authenticate: Bearer).',
  402: 'Balance too low; carries needed_cents.',
  403: 'The key cannot do this (not a spending key, wrong kind of key, over the approval limit, or over the key\'s budget: budget_exceeded).',
  404: 'Not found for this workspace.',
  406: 'The Accept header names no format this endpoint answers (application/json, or text/csv where the endpoint exports CSV).',
  409: 'The order has moved on (carries its status), or the same Idempotency-Key is still running.',
  413: 'Body over the endpoint\'s limit: 1 MB where it takes an article (POST /orders, content, drafts), else 64 KB.',
  422: 'Invalid input; errors names each bad field.',
  429: 'Rate limit exceeded; retry after Retry-After seconds.',
  503: 'The database is unreachable or too busy (placements: too many of one workspace at once); retry shortly.',
} as const;

export type ErrorStatus = keyof typeof errorDescriptions;

/**
 * OpenAPI error responses for a route: the given statuses plus those every route can answer.
 * Each is the shared `Error` schema with the status's own description (zod keeps the reference
 * to the registered parent and adds the description beside it). Headers that go with a status
 * (Retry-After on 429, WWW-Authenticate on 401, X-RateLimit-* on authenticated routes) are added
 * to the document by http/plugins/openapi.ts, so every route gets them without repeating them.
 */
export function errorResponses(...statuses: ErrorStatus[]) {
  const all = new Set<ErrorStatus>([...statuses, 429, 503]);
  return Object.fromEntries(
    [...all].sort((a, b) => a - b).map((s) => [s, errorBody.meta({ description: errorDescriptions[s] })]),
  ) as Record<ErrorStatus, typeof errorBody>;
}

/** Error responses of every authenticated buyer API route. */
export const authErrors = [401, 403] as const;

export const bearerSecurity = [{ bearerAuth: [] }];
