import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { httpUrl as linkUrl } from '../domain/http-url.js';
import { MAX_BALANCE_CENTS } from '../domain/ledger/limits.js';
import { expiryDate, usdLimit, usdLimitMessage } from '../schemas/key-budget.js';

export type RawFlags = Record<string, string | true | (string | true)[]>;

/**
 * `--name value` or `--name=value`, `--flag` (true); repeated flags collect into arrays. Node's
 * `parseArgs` splits the arguments; it does not know the command's flags (their schema reads
 * them later), so it reads `--name value` as a bare flag and a positional, and they are paired
 * here: the argument after a bare flag is its value unless it starts with `--` (`--cents -5` is a
 * value, for the schema to name the bound). Anything else is an unexpected argument.
 */
export function parseFlags(args: string[]): RawFlags {
  const { tokens } = parseArgs({ args, strict: false, allowPositionals: true, tokens: true });
  const given: [name: string, value: string | true][] = [];
  let bare = false; // whether the last flag was given without a value
  let seen = -1;
  for (const token of tokens) {
    if (token.index === seen) continue; // one argument read as several short options (-abc)
    seen = token.index;
    const arg = args[token.index]!;
    if (token.kind === 'option' && arg.startsWith('--')) {
      given.push([token.name, token.value ?? true]);
      bare = token.value === undefined;
    } else if (bare && !arg.startsWith('--')) {
      given[given.length - 1]![1] = arg;
      bare = false;
    } else throw new CliError(`unexpected argument ${JSON.stringify(arg)}`);
  }
  // A Map, so a flag named like an Object property (--constructor, --__proto__) is a flag too.
  const flags = new Map<string, RawFlags[string]>();
  for (const [name, value] of given) {
    const prev = flags.get(name);
    flags.set(name, prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value]);
  }
  return Object.fromEntries(flags);
}

export class CliError extends Error {}

type FlagSchema = z.ZodObject<z.ZodRawShape>;

/**
 * Validates flags against a command's schema; the first problem becomes the one-line error,
 * naming the flag as typed. Missing, bare (`--cents` with no value) and repeated flags get their
 * own words, whatever the flag's type.
 */
export function readFlags<S extends FlagSchema>(schema: S, flags: RawFlags): z.infer<S> {
  const parsed = schema.safeParse(flags);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    const known = Object.keys(schema.shape).map((k) => `--${k}`);
    const takes = known.length ? `it takes ${known.join(', ')}` : 'it takes no flags';
    throw new CliError(`--${issue.keys[0]}: unknown flag; ${takes}`);
  }
  const name = issue.path.length ? String(issue.path[0]) : undefined;
  if (name === undefined) throw new CliError(`arguments: ${issue.message}`);
  const given = flags[name];
  // A repeatable flag's own value (path [name, i]): its message, or that it has none.
  const one = Array.isArray(given) && issue.path.length > 1 ? given[Number(issue.path[1])] : given;
  const why =
    given === undefined ? 'is required' :
    // (a repeatable flag's list as a whole fails only on its count or a repeated value)
    Array.isArray(given) && issue.path.length === 1 && issue.code !== 'too_big' && issue.code !== 'custom' ? 'given more than once' :
    one === true && (issue.code === 'invalid_type' || issue.code === 'invalid_union') ? 'needs a value' :
    issue.message;
  throw new CliError(`--${name}: ${why}`);
}

export const str = z.string({ error: 'a value is required' }).trim().min(1, 'must not be empty');
/** A name or label: one line, at most 200 characters (like an order's anchor text). */
export const name = str.max(200, 'must be at most 200 characters');
/** Free text (descriptions): at most 2,000 characters. */
export const text = str.max(2000, 'must be at most 2,000 characters');
export const flag = z.literal(true, { error: 'takes no value' }).optional();
/** `true` or `false`, written out: a setting turned off is said, not left out. */
export const trueOrFalse = z.enum(['true', 'false'], { error: 'must be true or false' }).transform((v) => v === 'true');
/** A flag that may be repeated, each value checked by `item`; at most `max` of them, none twice. */
export const listOf = (item: z.ZodType<string>, max: number) =>
  z
    .preprocess(
      (v) => (v === undefined || Array.isArray(v) ? v : [v]),
      z
        .array(item)
        .max(max, `may be given at most ${max} times`)
        .refine((vs) => new Set(vs).size === vs.length, 'is given twice with the same value'),
    )
    .optional();

/** A whole number within [min, max]; unlike z.coerce, a bare `--flag` (true) is not taken as 1. */
export const wholeNumber = (min: number, max: number) =>
  z
    .string({ error: 'a value is required' })
    .trim()
    // A minus sign is read, so `-5` is told its bound rather than that it is not a whole number.
    .regex(/^-?\d+$/, 'must be a whole number')
    .transform((v) => Number(v) || 0) // `-0` is 0
    .pipe(
      z
        .number()
        .min(min, `must be at least ${min.toLocaleString('en-US')}`)
        .max(max, `must be at most ${max.toLocaleString('en-US')}`),
    );

/** A database id (PostgreSQL integer). */
export const id = wholeNumber(1, 2_147_483_647);
/** An amount in cents: the largest a balance may hold (MAX_BALANCE_CENTS) bounds any one amount. */
export const cents = wholeNumber(0, MAX_BALANCE_CENTS);
/** An amount in cents that must move something (a top-up). */
export const positiveCents = wholeNumber(1, MAX_BALANCE_CENTS);
/** `none`, or an amount in cents. */
export const centsOrNone = z
  .string({ error: 'a value is required' })
  .trim()
  .transform((v, ctx) => {
    if (v === 'none') return null;
    const parsed = cents.safeParse(v);
    if (parsed.success) return parsed.data;
    ctx.addIssue({ code: 'custom', message: `must be none or ${parsed.error.issues[0]!.message.replace(/^must be /, '')}` });
    return z.NEVER;
  });
/** `none`, or US dollars written plainly (200, 12.5, 0.015): cents, rounded half up (the console reads the same). */
export const usdOrNone = z
  .string({ error: 'a value is required' })
  .trim()
  .transform((v, ctx) => {
    if (v === 'none') return null;
    const parsed = usdLimit.safeParse(v);
    if (parsed.success) return parsed.data;
    ctx.addIssue({ code: 'custom', message: `must be none or ${usdLimitMessage.replace(/^must be /, '')}` });
    return z.NEVER;
  });

/** `none`, a date (00:00:00Z of that day) or an ISO 8601 instant with its offset. */
export const instantOrNone = z
  .string({ error: 'a value is required' })
  .trim()
  .transform((v, ctx) => {
    if (v === 'none') return null;
    const date = /^\d{4}-\d{2}-\d{2}$/.test(v) ? expiryDate.safeParse(v).data : /^\d{4}-\d{2}-\d{2}T[\d:.]+(Z|[+-]\d{2}:\d{2})$/.test(v) ? new Date(v) : undefined;
    if (!date || Number.isNaN(date.getTime())) {
      ctx.addIssue({ code: 'custom', message: 'must be none, a date (2027-01-31, meaning 00:00:00Z) or an instant (2027-01-31T12:00:00Z)' });
      return z.NEVER;
    }
    return date;
  });

/** A positive decimal number written plainly (0.92, 150), within [min, max]. */
export const decimal = (min: number, max: number) =>
  z
    .string({ error: 'a value is required' })
    .trim()
    .regex(/^\d+(\.\d+)?$/, 'must be a decimal number such as 0.92')
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max.toLocaleString('en-US')}`));
/** An http(s) URL. */
export const httpUrl = str.pipe(linkUrl);

/**
 * A file the command reads, as text; a file that cannot be read is the flag's error. A relative
 * path is read from `from` (the folder the operator ran npm in), else from the working directory.
 */
export async function readInputFile(path: string, from?: string): Promise<string> {
  try {
    return await readFile(from ? resolve(from, path) : path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : code === 'EACCES' ? 'permission denied' : (err as Error).message;
    throw new CliError(`--file: cannot read ${path}: ${why}`);
  }
}
