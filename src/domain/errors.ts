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
  'not_found',
  'method_not_allowed',
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

export const invalidInput = (errors: FieldErrors, message = GENERIC_INVALID) =>
  new DomainError('invalid_input', message, { errors });

export const forbidden = (message: string) => new DomainError('forbidden', message);

export const conflict = (message: string, status: string) =>
  new DomainError('conflict', message, { status });
