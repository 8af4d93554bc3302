import { negotiate } from '@fastify/accept-negotiator';
import type { FastifyInstance } from 'fastify';
import { DomainError } from '../domain/errors.js';

/**
 * Whether a request's Accept header prefers a page to JSON: a browser names `text/html` first (and
 * any type at a lower weight); curl sends only the any-type range and API clients
 * `application/json`, and each of those gets JSON. On equal weights JSON wins, so only a request
 * that names HTML gets it.
 */
export function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  return negotiate(accept.toLowerCase(), ['application/json', 'text/html']) === 'text/html';
}

/**
 * `GET /`: a browser is sent to the console at /app; an API client gets the JSON 404 it always
 * got (there is no resource at the root). Not in the OpenAPI document: it is no API operation.
 */
export async function frontDoor(app: FastifyInstance) {
  app.get('/', { config: { auth: 'public' }, schema: { hide: true } }, async (request, reply) => {
    // The answer depends on Accept: no cache may hand a browser's redirect to an API client.
    reply.header('vary', 'Accept');
    if (prefersHtml(request.headers.accept)) return reply.redirect('/app', 302);
    throw new DomainError('not_found', `No route ${request.method} /.`);
  });
}
