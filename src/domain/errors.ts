import { isDatabaseUnavailable } from '../db/errors.js';

/**
 * The closed set of error codes the service can answer with. Domain code throws DomainError with
 * one of these; http/plugins/errors.ts maps them to statuses and mcp maps them to tool errors.
 */
export const errorCodes = [
  'bad_request',
  'idempotency_key_required',
  'unauthenticated',
  'forbidden',
  'approval_required',
  'budget_exceeded',
  'not_found',
  'method_not_allowed',
  'not_acceptable',
  'payload_too_large',
  'request_timeout',
  'invalid_input',
  'idempotency_key_reused',
  'idempotency_in_progress',
  'insufficient_balance',
  'conflict',
  'quote_changed',
  'rate_limited',
  'unavailable',
  'internal_error',
] as const;

export type ErrorCode = (typeof errorCodes)[number];

/** Field path → what is wrong with it. */
export type FieldErrors = Record<string, string[]>;

export class DomainError extends Error {
  readonly code: ErrorCode;
  /** Extra public fields merged into the error body (needed_cents, status, errors…). */
  readonly details: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'DomainError';
    this.code = code;
    this.details = details;
  }
}

export const notFound = (what: string) => new DomainError('not_found', `${what} not found.`);

/** What an invalid_input error says when its fields say it all. */
export const GENERIC_INVALID = 'The given data was invalid.';

/** At most this many fields are named in one answer; the rest are counted in `errors_omitted`. */
export const MAX_FIELD_ERRORS = 20;

/**
 * The first MAX_FIELD_ERRORS fields of `errors` and how many were left out: a body with 75,000
 * unknown members must not get an answer that lists every one.
 */
export function capFieldErrors(errors: FieldErrors): { errors: FieldErrors; omitted: number } {
  const keys = Object.keys(errors);
  if (keys.length <= MAX_FIELD_ERRORS) return { errors, omitted: 0 };
  const kept: FieldErrors = Object.create(null) as FieldErrors;
  for (const key of keys.slice(0, MAX_FIELD_ERRORS)) kept[key] = errors[key]!;
  return { errors: kept, omitted: keys.length - MAX_FIELD_ERRORS };
}

export const invalidInput = (errors: FieldErrors, message: string | ((capped: FieldErrors, omitted: number) => string) = GENERIC_INVALID) => {
  const capped = capFieldErrors(errors);
  const text = typeof message === 'string' ? message : message(capped.errors, capped.omitted);
  return new DomainError('invalid_input', text, { errors: capped.errors, ...(capped.omitted ? { errors_omitted: capped.omitted } : {}) });
};

export const forbidden = (message: string) => new DomainError('forbidden', message);

export const conflict = (message: string, status: string) =>
  new DomainError('conflict', message, { status });

/**
 * The `unavailable` error for a database that cannot be reached (down, restarting, pool timed
 * out), whatever layer met it; undefined for any other error. The driver's message never reaches
 * a client.
 */
export function unavailableDatabase(err: unknown): DomainError | undefined {
  return isDatabaseUnavailable(err) ? new DomainError('unavailable', 'The service is temporarily unavailable. Try again shortly.') : undefined;
}
