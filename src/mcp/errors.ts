import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyBaseLogger } from 'fastify';
import type { z } from 'zod';
import { DomainError, type FieldErrors, GENERIC_INVALID, invalidInput, unavailableDatabase } from '../domain/errors.js';
import { type FieldIssue, fieldProblems } from '../domain/input-messages.js';

/**
 * The one mapping from errors to MCP tool errors: `isError: true`, one text item holding
 * `{code, message, request_id, ...}` with the REST code and its extra fields (needed_cents,
 * status, errors…), and no structuredContent (clients validate it against the output schema even
 * on errors). Unknown errors are logged and answered with a generic internal_error.
 */
export function toolError(err: unknown, ctx: { log: FastifyBaseLogger; requestId: string }, tool: string): CallToolResult {
  let error: DomainError;
  const down = unavailableDatabase(err);
  if (err instanceof DomainError) error = err;
  else if (down) error = down;
  else {
    ctx.log.error({ err, tool }, 'MCP tool failed');
    error = new DomainError('internal_error', 'Something went wrong on our side. It has been logged; quote the request_id when reporting it.');
  }
  const body = { code: error.code, message: agentMessage(error), request_id: ctx.requestId, ...error.details };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] };
}

/** An agent reads the message first: a generic invalid_input one is replaced by what is wrong. */
function agentMessage(error: DomainError): string {
  const errors = error.details.errors as FieldErrors | undefined;
  const omitted = Number(error.details.errors_omitted ?? 0);
  return error.message === GENERIC_INVALID && errors ? `Invalid arguments: ${summarise(errors, omitted)}.` : error.message;
}

const summarise = (errors: FieldErrors, omitted: number) =>
  Object.entries(errors)
    .map(([field, problems]) => `${field}: ${problems.join('; ')}`)
    .join(', ') + (omitted ? ` and ${omitted} more` : '');

/** A zod failure as invalid_input naming every bad argument, like REST's 422. */
export function invalidArguments(error: z.ZodError): DomainError {
  // No prototype: an argument named `constructor` or `toString` must not find Object's members.
  const errors: FieldErrors = Object.create(null) as FieldErrors;
  const byField = new Map<string, FieldIssue[]>();
  const add = (field: string, code: string, message: string, origin?: string) => byField.set(field, [...(byField.get(field) ?? []), { code, message, origin }]);
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) add([...issue.path, key].join('.'), issue.code, 'is not an argument of this tool');
      continue;
    }
    add(issue.path.length ? issue.path.join('.') : 'arguments', issue.code, issue.message, 'origin' in issue ? String(issue.origin) : undefined);
  }
  for (const [field, issues] of byField) errors[field] = fieldProblems(issues);
  return invalidInput(errors, (capped, omitted) => `Invalid arguments: ${summarise(capped, omitted)}.`);
}
