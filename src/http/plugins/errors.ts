import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { describeLimit } from '../body-limits.js';
import { logRefusedRequest } from './logging.js';
import { type FieldIssue, fieldProblems } from '../../domain/input-messages.js';
import { DomainError, type ErrorCode, type FieldErrors, invalidInput, unavailableDatabase } from '../../domain/errors.js';

/** The one mapping from error codes to HTTP statuses. */
export const httpStatusOf: Record<ErrorCode, number> = {
  bad_request: 400,
  idempotency_key_required: 400,
  unauthenticated: 401,
  forbidden: 403,
  approval_required: 403,
  budget_exceeded: 403,
  not_found: 404,
  method_not_allowed: 405,
  not_acceptable: 406,
  payload_too_large: 413,
  request_timeout: 408,
  invalid_input: 422,
  idempotency_key_reused: 422,
  idempotency_in_progress: 409,
  insufficient_balance: 402,
  conflict: 409,
  quote_changed: 409,
  rate_limited: 429,
  unavailable: 503,
  internal_error: 500,
};

export interface ErrorBody {
  message: string;
  code: ErrorCode;
  request_id: string;
  [extra: string]: unknown;
}

/** Renders an error in the buyer API's shape. Other surfaces (the seller API) swap this out. */
export type ErrorRenderer = (request: FastifyRequest, reply: FastifyReply, error: DomainError) => unknown;

/** The error's body; `request` is the one it names (a kept refusal's replay names the first). */
export function v1ErrorBody(request: Pick<FastifyRequest, 'id'>, error: DomainError): ErrorBody {
  return { message: error.message, code: error.code, request_id: request.id, ...error.details };
}

export const renderV1Error: ErrorRenderer = (request, reply, error) => {
  const body = v1ErrorBody(request, error);
  if (error.code === 'unauthenticated') reply.header('www-authenticate', 'Bearer');
  if ((error.code === 'rate_limited' || error.code === 'unavailable') && typeof error.details.retry_after === 'number') reply.header('retry-after', error.details.retry_after);
  return reply.code(httpStatusOf[error.code]).send(body);
};

function fieldPath(instancePath: string | undefined, context: string | undefined): string {
  const path = (instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
  if (path) return path;
  return context === 'body' ? 'body' : (context ?? 'input');
}

function carriesBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** Turns anything thrown during a request into a DomainError; unknown errors become masked 500s. */
export function toDomainError(err: unknown, bodyLimit?: number): DomainError {
  if (err instanceof DomainError) return err;
  if (hasZodFastifySchemaValidationErrors(err)) {
    const byField = new Map<string, FieldIssue[]>();
    for (const v of err.validation) {
      // Query parameters and body fields no schema knows (strict schemas), each by name.
      if (v.keyword === 'unrecognized_keys') {
        const what = err.validationContext === 'querystring' ? 'is not a parameter of this endpoint' : 'is not a field of this request';
        const at = (v.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
        for (const name of (v.params as { keys?: string[] }).keys ?? []) byField.set(at ? `${at}.${name}` : name, [{ code: v.keyword, message: what }]);
        continue;
      }
      const key = fieldPath(v.instancePath, err.validationContext);
      // The body as a whole (not a field that happens to be named `body`) says so.
      const whole = !(v.instancePath ?? '').replace(/^\//, '') && err.validationContext === 'body' && v.keyword === 'invalid_type';
      const message = whole ? 'the request body must be a JSON object' : (v.message ?? 'is invalid');
      const { origin } = (v.params ?? {}) as { origin?: string };
      byField.set(key, [...(byField.get(key) ?? []), { code: v.keyword, message, origin }]);
    }
    const errors: FieldErrors = Object.fromEntries([...byField].map(([key, issues]) => [key, fieldProblems(issues)]));
    return invalidInput(errors);
  }
  const fe = err as Partial<FastifyError>;
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new DomainError(
        'payload_too_large',
        bodyLimit ? `The request body is larger than this endpoint takes (${describeLimit(bodyLimit)}).` : 'The request body is too large.',
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new DomainError('bad_request', 'Send the request body as application/json.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new DomainError('bad_request', 'The Content-Length header does not match the body.');
  }
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    // Other client errors raised by Fastify itself (bad URL encoding, malformed headers, a body
    // the client stopped sending: 'aborted' with code ECONNRESET, which is not the database).
    return new DomainError('bad_request', 'The request could not be understood.');
  }
  return unavailableDatabase(err) ?? new DomainError('internal_error', 'Something went wrong on our side. It has been logged.');
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Which error shape this route answers in; the buyer API's by default. */
    renderError?: ErrorRenderer;
  }
}

export const errorHandling = fp(
  async function errorHandling(app: FastifyInstance, opts: { notFoundRenderer?: (req: FastifyRequest) => ErrorRenderer }) {
    app.setErrorHandler((err, request, reply) => {
      const domainError = toDomainError(err, request.routeOptions.bodyLimit);
      const status = httpStatusOf[domainError.code];
      if (status >= 500) request.log.error({ err }, 'request failed');
      // Refused before its body was read (401 and 429 before parsing, 413): keeping the connection
      // would mean reading that body only to throw it away, a megabyte for each such request.
      // Closing it costs the client a reconnect instead.
      if (!request.raw.complete && carriesBody(request)) reply.header('connection', 'close');
      // Errors before an unknown path's 404 (an unparseable body, say) answer in that path's surface.
      const render =
        request.routeOptions.config?.renderError ?? (request.is404 ? opts.notFoundRenderer?.(request) : undefined) ?? renderV1Error;
      return render(request, reply, domainError);
    });
    // Every route's path pattern and methods, so a known path asked with another method is a 405
    // with Allow rather than a 404.
    const routes: Array<{ pattern: RegExp; methods: string[] }> = [];
    app.addHook('onRoute', (route) => {
      if (route.url.includes('*')) return;
      const segments = route.url.split('/').map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.+?^${}()|[\]\\]/g, '\\$&')));
      const pattern = new RegExp(`^${segments.join('/').replace(/\/$/, '')}/?$`);
      routes.push({ pattern, methods: ([] as string[]).concat(route.method) });
    });
    const allowedMethods = (url: string): string[] => {
      const path = url.split('?')[0] ?? '';
      return [...new Set(routes.filter((r) => r.pattern.test(path)).flatMap((r) => r.methods))].sort();
    };
    app.setNotFoundHandler((request, reply) => {
      const render = opts.notFoundRenderer?.(request) ?? renderV1Error;
      const path = (request.url.split('?')[0] ?? '').slice(0, 200);
      const allow = render === renderV1Error ? allowedMethods(request.url) : [];
      if (allow.length) {
        reply.header('allow', allow.join(', '));
        return render(request, reply, new DomainError('method_not_allowed', `${request.method} is not allowed on ${path}; use ${allow.join(', ')}.`));
      }
      return render(request, reply, new DomainError('not_found', `No route ${request.method} ${path}.`));
    });
  },
  { name: 'error-handling' },
);

/** A surface's own error body for a path, when it has one (the seller API under its prefixes). */
export type ClientErrorBody = (url: string, error: DomainError) => { status: number; body: object } | undefined;

/** The request target of what Node's parser refused, read from its request line when there is one. */
function requestLine(err: Error & { rawPacket?: unknown }): { method: string; target: string } | undefined {
  if (!Buffer.isBuffer(err.rawPacket)) return undefined;
  const line = err.rawPacket.subarray(0, 8192).toString('latin1').split('\r\n', 1)[0] ?? '';
  const m = /^([!-~]+) (\S+)/.exec(line);
  return m ? { method: m[1]!, target: m[2]! } : undefined;
}

/**
 * Errors Node's HTTP parser raises before Fastify has a request (a deadline passed, malformed
 * or oversized headers, a bad Content-Length): answered on the socket, then closed, in Interface
 * A's error shape unless `surface` has its own for the request's path.
 */
export function clientErrorHandler(surface?: ClientErrorBody, log?: FastifyBaseLogger) {
  return (err: Error & { code?: string; rawPacket?: unknown }, socket: import('node:stream').Duplex): void => {
    if (!socket.writable) return;
    const timeout = err.code === 'ERR_HTTP_REQUEST_TIMEOUT';
    const requestId = randomUUID();
    const error = timeout
      ? new DomainError('request_timeout', 'The request took too long to arrive; the connection is closed.')
      : new DomainError('bad_request', 'The request could not be understood.');
    const first = requestLine(err);
    const target = first?.target;
    const own = target === undefined ? undefined : surface?.(target, error);
    const status = own?.status ?? httpStatusOf[error.code];
    const body = JSON.stringify(own?.body ?? { message: error.message, code: error.code, request_id: requestId });
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
    // One log line per request, this one too (no hook runs: there is no request).
    if (log) logRefusedRequest(log, { requestId, method: first?.method ?? null, target: target ?? null, status });
  };
}
