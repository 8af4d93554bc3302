import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

const API_KEY_PARAM = /([?&](?:api_key|api%5fkey)=)[^&#]*/gi;

/** A URL fit for logs: any api_key in the query string replaced. */
export function redactUrl(url: string): string {
  return url.replace(API_KEY_PARAM, '$1[REDACTED]');
}

/** Paths pino redacts from any object logged (headers and bodies carrying keys). */
export const redactPaths = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'authorization',
  'api_key',
  '*.api_key',
  'body.api_key',
  'query.api_key',
];

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
