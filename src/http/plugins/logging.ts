import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { LRUCache } from 'lru-cache';
import { KEY_SHAPED } from '../../domain/keys/key-format.js';

const REDACTED = '[REDACTED]';
/** Every key-shaped run in a text, to replace them all. */
const KEY_SHAPED_ALL = new RegExp(KEY_SHAPED.source, 'g');

/** A secret's name however it is separated (`api_key`, `API-KEY`, `purchase code`), once decoded. */
const SECRET_NAME = /api[\s_.-]?key|purchase[\s_.-]?code/i;
/** The same name alone, as a parameter name (the array form `api_key[]` too). */
const ONLY_SECRET_NAME = /^\s*(?:api[\s_.-]?key|purchase[\s_.-]?code)\s*(?:\[\])?\s*$/i;
/**
 * Words that make a parameter's value a secret, in any case and separator; the names the logger
 * redacts in objects (src/logger.ts): a token (a console invite link's `token`, any `…_token`:
 * OAuth's `access_token` and `refresh_token`, MCP's `confirmation_token`), a secret
 * (`client_secret`), a password, a CSRF token, an `Idempotency-Key`, `Authorization` or `Cookie`
 * header's value sent as a parameter.
 */
const SECRET_WORDS = String.raw`token|secret|passw(?:or)?d|csrf|idempotency[\s_.-]?key|authorization|cookie`;
/** A parameter so named, or an OAuth `code` or `code_verifier`: its value goes, wherever it stands. */
const TOKEN_NAME = new RegExp(String.raw`${SECRET_WORDS}|^\s*code(?:_verifier)?\s*(?:\[\])?\s*$`, 'i');
/**
 * Such a parameter hidden in another part's decoded text (`q=a%26password%3D…`, a segment
 * `token%3D…`), where a lenient parser may still find it: the part goes whole.
 */
const HIDDEN_TOKEN = new RegExp(String.raw`(?:${SECRET_WORDS})[^=&;]*=|(?:^|[?&;])\s*code(?:_verifier)?\s*=`, 'i');
/** Whether a URL may hold such a parameter at all (the fast path skips the rest). */
const MAY_HOLD_TOKEN = new RegExp(String.raw`${SECRET_WORDS}|[?&;]\s*code`, 'i');
const BAD_ESCAPE = /%(?![0-9a-f]{2})/i;
/**
 * Text with no separator a parser could read a value after (no `=`, `&`, `;`, space, `:`): a
 * route word (`api-keys`) or a path (`next=/app/w/1/settings/api-keys`). A secret's name in it
 * names no value, so it stays.
 */
const PLAIN_WORDS = /^[A-Za-z0-9_.~/-]*$/;
/** Where a URL's parts end: path segments, the query, its parameters (`&`, or `;` as some servers read it), the fragment. */
const PART = /([/?&;#])/;

/**
 * Text as any decoder along the way might read it: percent-escapes undone byte by byte, again
 * while that changes something (`%2561` → `%61` → `a`), and `+` as a space. Invalid escapes stay
 * as they are; nothing here is shown, it is only searched for a secret's name.
 */
function looselyDecoded(text: string): string {
  let out = text.replaceAll('+', ' ');
  for (let i = 0; i < 4 && out.includes('%'); i++) {
    const next = out.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    if (next === out) break;
    out = next;
  }
  return out;
}

/**
 * One part of a URL, redacted when it carries a secret in any spelling: `name=value` keeps its
 * name and loses its value (`api_key`, and names that contain it: `my_api_key`, `api_keys`); a
 * part whose secret hides where no parser splits it (`api_key%3D…`, a name holding an encoded
 * `=` or `&`) goes whole. A key pasted where an id or another value goes (`/orders/mk_…`) is a
 * secret whatever names it: it goes, and the rest of the part stays unless the key was escaped.
 */
function redactPart(sent: string, inQuery: boolean): string {
  const part = sent.replace(KEY_SHAPED_ALL, REDACTED);
  const decoded = looselyDecoded(part);
  if (KEY_SHAPED.test(decoded)) return REDACTED;
  const eq = part.indexOf('=');
  if (eq !== -1 && TOKEN_NAME.test(looselyDecoded(part.slice(0, eq)))) return `${part.slice(0, eq)}=${REDACTED}`;
  if (HIDDEN_TOKEN.test(looselyDecoded(eq === -1 ? part : part.slice(eq + 1)))) return REDACTED;
  // A name with an escape no decoder agrees on (`api%ZZkey`) counts: a lenient parser may still read it as the key.
  const nameBadlyEscaped = eq !== -1 && BAD_ESCAPE.test(part.slice(0, eq));
  if (!SECRET_NAME.test(decoded) && !nameBadlyEscaped) return part;
  const name = eq === -1 ? '' : looselyDecoded(part.slice(0, eq));
  // The secret's name only in a path segment or another parameter's value: redacted only when a
  // value could follow it there; route words are kept, or every console URL under api-keys loses its path.
  if (!SECRET_NAME.test(name) && !nameBadlyEscaped && PLAIN_WORDS.test(eq === -1 ? decoded : looselyDecoded(part.slice(eq + 1)))) {
    return inQuery && eq === -1 && ONLY_SECRET_NAME.test(decoded) ? `${part}=${REDACTED}` : part;
  }
  if (eq !== -1 && !/[=&;]/.test(name)) return `${part.slice(0, eq)}=${REDACTED}`;
  if (eq === -1 && ONLY_SECRET_NAME.test(decoded)) return `${part}=${REDACTED}`;
  return REDACTED;
}

/**
 * URLs found to hold nothing to redact, so the same path (`/api/purchases/validation`, ten thousand
 * times a second) is searched once, not on every request (about 1 µs each). Only such URLs are
 * kept, never one that holds a secret; the 1,000 most recently seen (a flood of distinct URLs
 * pushes out the oldest).
 */
const clean = new LRUCache<string, true>({ max: 1_000 });

/**
 * A URL fit for logs: every part that carries an api_key or purchase_code (a buyer's license),
 * in the query or the path, in any spelling a client may send (percent-encoded once or twice,
 * after `;`, behind an encoded `=` or `&`), replaced; so are the values of parameters named as
 * secrets (passwords, tokens, codes, Idempotency-Key values) and every key-shaped string.
 */
export function redactUrl(url: string): string {
  if (clean.has(url)) return url;
  const decodedUrl = looselyDecoded(url);
  if (!SECRET_NAME.test(decodedUrl) && !MAY_HOLD_TOKEN.test(decodedUrl) && !KEY_SHAPED.test(decodedUrl) && !BAD_ESCAPE.test(url)) {
    clean.set(url, true);
    return url;
  }
  const parts = url.split(PART);
  const query = parts.indexOf('?');
  return parts.map((part, i) => (i % 2 === 1 ? part : redactPart(part, query !== -1 && i > query))).join('');
}

/** A request's one log line; the request id comes from the child logger's bindings. */
function writeLine(request: FastifyRequest, status: number, durationMs: number): void {
  const line = {
    method: request.method,
    route: request.routeOptions.url ?? null,
    // The URL as the client sent it: a path handed to a mounted middleware (/oauth) is logged whole.
    url: redactUrl(request.originalUrl),
    status,
    duration_ms: Math.round(durationMs * 100) / 100,
  };
  if (status >= 500) request.log.error(line, 'request');
  else request.log.info(line, 'request');
}

/**
 * One log line per request (Fastify's default writes two), written when the response is done.
 */
export const requestLogging = fp(
  async function requestLogging(app: FastifyInstance) {
    app.addHook('onResponse', async (request, reply) => writeLine(request, reply.statusCode, reply.elapsedTime));
  },
  { name: 'request-logging' },
);

/**
 * The line of a request Fastify answers before routing it (a path the router cannot decode, a
 * parameter over its length: `frameworkErrors`), for which no hook runs; written once the
 * response is sent, timed from when it was refused.
 */
export function logWhenSent(request: FastifyRequest, reply: FastifyReply): void {
  const start = performance.now();
  const done = () => {
    reply.raw.off('finish', done);
    reply.raw.off('error', done);
    writeLine(request, reply.statusCode, performance.now() - start);
  };
  reply.raw.on('finish', done);
  reply.raw.on('error', done);
}

/**
 * The line of a request Node's HTTP parser refused before Fastify had a request (malformed
 * headers, a deadline passed: `clientErrorHandler`): what could be read of its first line, no
 * route, no duration.
 */
export function logRefusedRequest(log: FastifyBaseLogger, line: { requestId: string; method: string | null; target: string | null; status: number }): void {
  log.info({ request_id: line.requestId, method: line.method, route: null, url: line.target === null ? null : redactUrl(line.target), status: line.status, duration_ms: null }, 'request');
}
