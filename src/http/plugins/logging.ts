import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

const REDACTED = '[REDACTED]';

/** A secret's name however it is separated (`api_key`, `API-KEY`, `purchase code`), once decoded. */
const SECRET_NAME = /api[\s_.-]?key|purchase[\s_.-]?code/i;
/** The same name alone, as a parameter name (the array form `api_key[]` too). */
const ONLY_SECRET_NAME = /^\s*(?:api[\s_.-]?key|purchase[\s_.-]?code)\s*(?:\[\])?\s*$/i;
/**
 * A parameter naming a token (a console invite link's `token`, any `…_token`, OAuth's
 * `access_token` and `refresh_token`), a secret (`client_secret`) or an OAuth `code` or
 * `code_verifier`: its value goes, wherever it stands.
 */
const TOKEN_NAME = /token|secret|^\s*code(?:_verifier)?\s*(?:\[\])?\s*$/i;
/** Whether a URL may hold such a parameter at all (the fast path skips the rest). */
const MAY_HOLD_TOKEN = /token|secret|[?&;]\s*code/i;
const BAD_ESCAPE = /%(?![0-9a-f]{2})/i;
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
 * `=` or `&`) goes whole.
 */
function redactPart(part: string): string {
  const decoded = looselyDecoded(part);
  const eq = part.indexOf('=');
  if (eq !== -1 && TOKEN_NAME.test(looselyDecoded(part.slice(0, eq)))) return `${part.slice(0, eq)}=${REDACTED}`;
  // A name with an escape no decoder agrees on (`api%ZZkey`) counts: a lenient parser may still read it as the key.
  if (!SECRET_NAME.test(decoded) && !(eq !== -1 && BAD_ESCAPE.test(part.slice(0, eq)))) return part;
  if (eq !== -1 && !/[=&;]/.test(looselyDecoded(part.slice(0, eq)))) return `${part.slice(0, eq)}=${REDACTED}`;
  if (eq === -1 && ONLY_SECRET_NAME.test(decoded)) return `${part}=${REDACTED}`;
  return REDACTED;
}

/**
 * A URL fit for logs: every part that carries an api_key or purchase_code (a buyer's license),
 * in the query or the path, in any spelling a client may send (percent-encoded once or twice,
 * after `;`, behind an encoded `=` or `&`), replaced.
 */
export function redactUrl(url: string): string {
  const decodedUrl = looselyDecoded(url);
  if (!SECRET_NAME.test(decodedUrl) && !MAY_HOLD_TOKEN.test(decodedUrl) && !BAD_ESCAPE.test(url)) return url;
  return url
    .split(PART)
    .map((part, i) => (i % 2 === 1 ? part : redactPart(part)))
    .join('');
}

/**
 * One log line per request (Fastify's default writes two), written when the response is done.
 * Request ids come from the child logger's bindings.
 */
export const requestLogging = fp(
  async function requestLogging(app: FastifyInstance) {
    app.addHook('onResponse', async (request, reply) => {
      const status = reply.statusCode;
      const line = {
        method: request.method,
        route: request.routeOptions.url ?? null,
        // The URL as the client sent it: a path handed to a mounted middleware (/oauth) is logged whole.
        url: redactUrl(request.originalUrl),
        status,
        duration_ms: Math.round(reply.elapsedTime * 100) / 100,
      };
      if (status >= 500) request.log.error(line, 'request');
      else request.log.info(line, 'request');
    });
  },
  { name: 'request-logging' },
);
