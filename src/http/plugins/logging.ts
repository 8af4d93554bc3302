import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

const REDACTED = '[REDACTED]';

/**
 * Whether a raw query-string name means a secret (api_key; purchase_code: a buyer's license;
 * token: a console invite link's)
 * once the query parser has decoded it: any spelling of its letters (`%61pi_key`, `API%5FKEY`) and
 * the array form (`api_key[]`). A name that cannot be decoded counts, so no spelling the parser
 * might still accept gets through.
 */
function namesSecret(rawName: string): boolean {
  let name: string;
  try {
    name = decodeURIComponent(rawName.replaceAll('+', ' '));
  } catch {
    return true;
  }
  return /^(?:api_key|purchase_code|token)(?:\[\])?$/i.test(name);
}

/** A URL fit for logs: the value of every query parameter naming a secret replaced. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q === -1) return url;
  const hash = url.indexOf('#', q);
  const query = url.slice(q + 1, hash === -1 ? undefined : hash);
  const parts = query.split('&').map((part) => {
    const eq = part.indexOf('=');
    const name = eq === -1 ? part : part.slice(0, eq);
    return namesSecret(name) ? `${name}=${REDACTED}` : part;
  });
  return `${url.slice(0, q + 1)}${parts.join('&')}${hash === -1 ? '' : url.slice(hash)}`;
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
        url: redactUrl(request.url),
        status,
        duration_ms: Math.round(reply.elapsedTime * 100) / 100,
      };
      if (status >= 500) request.log.error(line, 'request');
      else request.log.info(line, 'request');
    });
  },
  { name: 'request-logging' },
);
