import { z } from 'zod';

// Characters a link does not carry as typed: whitespace of any kind, controls and invisible
// format characters (zero-width spaces, direction marks), which parsers drop or readers cannot
// see, and " < > \ `, which end an HTML attribute or are read as "/". A URL holding one is a paste
// with a stray space or a typo. { } | ^ stay allowed: browsers keep them in URLs they show
// (`?family=Roboto|Open+Sans`). The check runs on the value as sent: z.url trims it and drops tabs
// and newlines, and the URL stored would be another than the one given.
const NOT_IN_A_URL = /[\s\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"<>\\`]/u;
// Credentials in a link would be shown to the publisher and sent on by every reader's browser.
const USERINFO = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i;
const LOOKS_LIKE_ONE = /^https?:\/\/[^\s/?#]/i;

/** Why `v` is not a URL as a link carries it (a raw character it must encode, or user:password@), or undefined. */
export function urlTextProblem(v: string): string | undefined {
  if (NOT_IN_A_URL.test(v)) return 'must not contain whitespace, control or invisible characters, or " < > \\ ` (percent-encode them)';
  if (USERINFO.test(v)) return 'must not contain user:password@';
  return undefined;
}

/** An http(s) URL of at most 2000 characters as a link carries it: what `new URL` takes, as given, without raw characters a URL must encode or user:password@. */
export const httpUrl = z
  .string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be an http(s) URL') })
  .max(2000, 'must be at most 2000 characters')
  .superRefine((v, ctx) => {
    // Text that is no URL at all ("not a url") is told that, not which of its characters are wrong.
    const message = LOOKS_LIKE_ONE.test(v.trim()) ? urlTextProblem(v) : 'must be an http(s) URL';
    if (message) ctx.addIssue({ code: 'custom', message, abort: true });
  })
  .pipe(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }))
  .meta({ format: 'uri' });
