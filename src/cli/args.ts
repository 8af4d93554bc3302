import { z } from 'zod';

export type RawFlags = Record<string, string | true | (string | true)[]>;

/** `--name value`, `--flag` (true), repeated flags collect into arrays. */
export function parseFlags(tokens: string[]): RawFlags {
  const flags: RawFlags = {};
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (!token.startsWith('--') || token === '--') throw new CliError(`unexpected argument ${JSON.stringify(token)}`);
    const eq = token.indexOf('=');
    const name = token.slice(2, eq === -1 ? undefined : eq);
    let value: string | true;
    if (eq !== -1) value = token.slice(eq + 1);
    else if (i + 1 < tokens.length && !tokens[i + 1]!.startsWith('--')) value = tokens[++i]!;
    else value = true;
    const prev = flags[name];
    flags[name] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  return flags;
}

export class CliError extends Error {}

/** Validates flags against a command's schema; the first problem becomes the one-line error. */
export function readFlags<S extends z.ZodType>(schema: S, flags: RawFlags): z.infer<S> {
  const parsed = schema.safeParse(flags);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const flag = issue.path.length ? `--${String(issue.path[0])}` : 'arguments';
    throw new CliError(`${flag}: ${issue.message}`);
  }
  return parsed.data;
}

export const str = z.string({ error: 'a value is required' }).trim().min(1, 'must not be empty');
export const id = z.coerce.number({ error: 'must be a number' }).int('must be an integer').positive('must be positive');
export const cents = z.coerce.number({ error: 'must be a number' }).int('must be whole cents').nonnegative('must not be negative');
export const flag = z.literal(true, { error: 'takes no value' }).optional();
export const list = z
  .union([z.string(), z.array(z.string())])
  .transform((v) => (Array.isArray(v) ? v : [v]))
  .optional();

/** A whole number within [min, max]; unlike z.coerce, a bare `--flag` (true) is not taken as 1. */
export const wholeNumber = (min: number, max: number) =>
  z
    .string({ error: 'a value is required' })
    .trim()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max.toLocaleString('en-US')}`));
