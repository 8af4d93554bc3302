import { z } from 'zod';

// Characters a URL never holds as typed (RFC 3986: spaces, controls, " < > \ ^ ` { | }). A
// browser would encode or reinterpret them, so a URL holding one is a paste with a stray space
// or a typo, and storing it as given would show a publisher another link than the one meant.
const NOT_IN_A_URL = /[\u0000-\u0020\u007f"<>\\^`{|}]/;

/** An http(s) URL as a link would carry it: anything `new URL` takes, minus raw characters a URL must encode. */
export const httpUrl = z
  .url({ protocol: /^https?$/, error: (issue) => (issue.input === undefined ? 'is required' : 'must be an http(s) URL') })
  .refine((v) => !NOT_IN_A_URL.test(v), 'must not contain spaces or characters a URL must percent-encode (" < > \\ ^ ` { | })');
