import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, type ErrorCode } from '../../domain/errors.js';
import { type CatalogMessage, msg } from '../../schemas/catalog.js';
import { type ClientErrorBody, type ErrorRenderer, httpStatusOf, renderV1Error, toDomainError } from '../plugins/errors.js';

// The seller API answers every error as {"status":"error","msg":"..."} with the documented status
// and message (docs/interface-b.md), whatever raised it: a route, the body parser, the auth
// service, the database or the router.

/** An error that the seller API answers with exactly this `msg`. */
export function catalogError(code: ErrorCode, message: CatalogMessage, details: Record<string, unknown> = {}): DomainError {
  return new DomainError(code, message, { ...details, catalog_msg: message });
}

/** Status and message of errors that did not choose their own message (framework, auth, database). */
const byCode: Partial<Record<ErrorCode, [number, CatalogMessage]>> = {
  unauthenticated: [401, msg.invalidRequest],
  // Publisher keys and spending keys are refused like unknown ones (docs/interface-b.md).
  forbidden: [401, msg.invalidRequest],
  bad_request: [400, msg.invalidRequest],
  invalid_input: [400, msg.invalidRequest],
  not_found: [404, msg.notFound],
  payload_too_large: [413, msg.payloadTooLarge],
  rate_limited: [429, msg.tooManyRequests],
  unavailable: [503, msg.unavailable],
  internal_error: [500, msg.internal],
};

function catalogErrorResponse(error: DomainError): { status: number; body: { status: 'error'; msg: string } } {
  const chosen = error.details.catalog_msg;
  const [status, message] =
    typeof chosen === 'string' ? [httpStatusOf[error.code], chosen] : (byCode[error.code] ?? [httpStatusOf[error.code], msg.invalidRequest]);
  return { status, body: { status: 'error', msg: message } };
}

export const renderCatalogError: ErrorRenderer = (_request, reply, error) => {
  const { status, body } = catalogErrorResponse(error);
  // Retry-After is set by whoever raised the 429 (auth service or code guard), or carried by the error.
  if (typeof error.details.retry_after === 'number' && !reply.hasHeader('retry-after')) reply.header('retry-after', error.details.retry_after);
  return reply.code(status).send(body);
};

/** The seller API's routes and the methods each answers (HEAD comes with GET). */
export const catalogRoutesAllow: Record<string, string> = {
  '/api/account/details': 'GET, HEAD',
  '/api/items/all': 'GET, HEAD',
  '/api/items/item': 'GET, HEAD',
  '/api/purchases/validation': 'POST',
};

// Repeated slashes too: the router does not fold them, so `/api//items/all` is an unknown path of B's.
const CATALOG_PREFIX = /^\/+api\/+(?:account|items|purchases)(?:[/?#]|$)/i;

export function isCatalogUrl(url: string): boolean {
  return CATALOG_PREFIX.test(url);
}

/** Unknown paths under the seller API's prefixes: 405 for a known path with another method, else 404. */
export const renderCatalogNotFound: ErrorRenderer = (request, reply) => {
  let path = request.url.split('?')[0] ?? '';
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1); // the router ignores trailing slashes
  const allow = catalogRoutesAllow[path];
  if (allow) return reply.code(405).header('allow', allow).send({ status: 'error', msg: msg.methodNotAllowed });
  return reply.code(404).send({ status: 'error', msg: msg.notFound });
};

/** For the HTTP parser's errors (`clientErrorHandler`): the seller API's shape under its prefixes. */
export const catalogClientErrorBody: ClientErrorBody = (url, error) => (isCatalogUrl(url) ? catalogErrorResponse(error) : undefined);

/** For errorHandling's `notFoundRenderer`: the seller API's shape under its prefixes, the buyer API's elsewhere. */
export function catalogNotFoundRenderer(request: FastifyRequest): ErrorRenderer {
  return isCatalogUrl(request.url) ? renderCatalogNotFound : renderV1Error;
}

/**
 * Fastify's `frameworkErrors`: errors the router raises before any route or hook runs (a path
 * with malformed percent-encoding, an over-long path parameter). Without it Fastify answers in
 * its own shape; with it, the seller API's paths answer 400 Invalid request and the others in
 * The buyer API's shape, both with the request id.
 */
export function renderFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id);
  const render = isCatalogUrl(request.url) ? renderCatalogError : renderV1Error;
  void render(request, reply, toDomainError(error));
}
