import { invalidInput } from './errors.js';

// PostgreSQL text cannot hold U+0000, and an unpaired UTF-16 surrogate (which JSON's \ud800 can
// carry) is stored as U+FFFD, or refused inside jsonb: either would fail as a 500 or come back
// changed, so such strings are refused with the other invalid input, naming the field.
const UNSTORABLE = /\u0000|\p{Cs}/u;

// Deeper than any input schema goes: what lies below is refused by validation anyway, and a
// client's JSON nesting thousands of levels must not exhaust the stack here.
const MAX_DEPTH = 32;

/** The dotted path of the first string in `value` PostgreSQL cannot store as given, if any. */
export function unstorableTextPath(value: unknown, path = '', depth = 0): string | undefined {
  if (typeof value === 'string') return UNSTORABLE.test(value) ? path : undefined;
  if (value === null || typeof value !== 'object' || depth >= MAX_DEPTH) return undefined;
  for (const [key, item] of Object.entries(value)) {
    const found = unstorableTextPath(item, path ? `${path}.${key}` : key, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

export const UNSTORABLE_TEXT_MESSAGE = 'must not contain NUL characters or unpaired UTF-16 surrogates';

/** Refuses input holding a string PostgreSQL cannot store as given (422, naming the field). */
export function refuseUnstorableText(value: unknown, root: string): void {
  const path = unstorableTextPath(value);
  if (path !== undefined) throw invalidInput({ [path || root]: [UNSTORABLE_TEXT_MESSAGE] });
}
