import { z } from 'zod';
import { memberRoles } from '../../common/enums.js';
import { invalidInput, type FieldErrors } from '../errors.js';
import { fieldProblems } from '../input-messages.js';

// What a person types on the sign-up, invitation and CLI forms; the console's forms and the CLI
// validate with these same schemas (through `parseUserInput`).

export const emailField = z
  .string({ error: 'must be a string' })
  .trim()
  .min(1, 'must not be empty')
  .max(254, 'must be at most 254 characters')
  .regex(/^[^\s@\u0000-\u001f\u007f]+@[^\s@\u0000-\u001f\u007f]+\.[^\s@\u0000-\u001f\u007f]+$/, 'must be an email address, e.g. ana@example.com')
  .refine((v) => !/\p{Cs}/u.test(v), 'must be an email address, e.g. ana@example.com');

export const nameField = z
  .string({ error: 'must be a string' })
  .trim()
  .min(1, 'must not be empty')
  .max(100, 'must be at most 100 characters')
  .refine((v) => !/[\u0000-\u001f\u007f]/.test(v), 'must not contain control characters');

// OWASP: at least 8 characters, long passphrases allowed, no composition rules. The upper bound
// keeps one request's hashing cheap.
export const passwordField = z
  .string({ error: 'must be a string' })
  .min(8, 'must be at least 8 characters')
  .max(256, 'must be at most 256 characters')
  .refine((v) => !v.includes('\u0000'), 'must not contain NUL characters');

export const roleField = z.enum(memberRoles, { error: `must be one of: ${memberRoles.join(', ')}` });

/** Parses `value` or throws invalid_input naming each bad field. */
export function parseUserInput<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const byField = new Map<string, Array<{ code: string; message: string }>>();
  for (const issue of parsed.error.issues) {
    const field = issue.path.map(String).join('.') || 'input';
    byField.set(field, [...(byField.get(field) ?? []), issue]);
  }
  const errors: FieldErrors = {};
  for (const [field, issues] of byField) errors[field] = fieldProblems(issues);
  throw invalidInput(errors);
}
