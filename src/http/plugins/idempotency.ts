import { hash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type pg from 'pg';
import type { Clock } from '../../domain/clock.js';
import { DomainError, invalidInput } from '../../domain/errors.js';
import { canonicalJson } from '../../common/canonical-json.js';
import { UNSTORABLE_TEXT_MESSAGE, unstorableTextPath } from '../../domain/text-input.js';
import { type Kept, type OnceKey, type OnceOptions, recordOnce } from '../../domain/idempotency/record-once.js';
import { z } from 'zod';
import { httpStatusOf, v1ErrorBody } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** POSTs under /api/v1 honour Idempotency-Key; `required` refuses requests without one. */
    idempotency?: 'required' | 'optional';
  }
}

const keyHeader = z
  .string()
  .describe('Any unique string of 1–255 visible ASCII characters (e.g. a UUID). A retry with the same key within 24 h replays the first answer.');
// Loose: Fastify replaces request.headers with the validated value, which must keep every header.
const idempotencyHeaders = {
  required: z.looseObject({ 'idempotency-key': keyHeader }),
  optional: z.looseObject({ 'idempotency-key': keyHeader.optional() }),
};
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

// Taken before validation: the body as the client sent it, not as zod left it (unknown keys
// dropped, strings trimmed), so a request that differs only there is another request (422).
const fingerprints = new WeakMap<FastifyRequest, string>();

/** Method + route + path params + canonical body (sorted keys; no body = {}), as sent. */
export function fingerprintOf(request: FastifyRequest): string {
  return fingerprints.get(request) ?? computeFingerprint(request);
}

/** Path ids as the resource they name: `/orders/02` is `/orders/2`, not another request. */
function canonicalParams(params: unknown): unknown {
  if (!params || typeof params !== 'object') return {};
  return Object.fromEntries(
    Object.entries(params).map(([k, v]) => [k, typeof v === 'string' && /^\d+$/.test(v) ? v.replace(/^0+(?=\d)/, '') : v]),
  );
}

function computeFingerprint(request: FastifyRequest): string {
  const material = canonicalJson([request.method, request.routeOptions.url, canonicalParams(request.params), request.body ?? {}]);
  return hash('sha256', material, 'hex');
}

// Only outcomes decided by the business logic are kept: successes, a 402, and a 409 from the
// order's state. Anything else (400, 401, 403, 404, 422, 429, 5xx) may succeed on a retry.
export const storable = (e: DomainError) => e.code === 'insufficient_balance' || e.code === 'conflict';

/** The request's Idempotency-Key; an empty or blank header sends none (the documented answer for a missing one). */
function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const key = request.headers['idempotency-key'];
  return typeof key === 'string' && key.trim() !== '' ? key : undefined;
}

/** Where a request's outcome is kept: its API key's record of its Idempotency-Key, if it sent one. */
export function requestKey(request: FastifyRequest): OnceKey | undefined {
  const key = idempotencyKeyOf(request);
  return key === undefined
    ? undefined
    : { book: 'request', apiKeyId: request.principal!.keyId, key, fingerprint: fingerprintOf(request), requestId: request.id };
}

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Sends a call's outcome as JSON text: a success as `{ data }` with `status`, a kept refusal in
 * the error shape naming the request that ran it. A replay is encoded the same way from the kept
 * value, so it sends the first answer's bytes, with `Idempotent-Replayed: true`.
 */
export function sendKept<T>(request: FastifyRequest, reply: FastifyReply, kept: Kept<T>, status: number) {
  if (kept.replayed) reply.header('idempotent-replayed', 'true');
  if (kept.ok) return reply.code(status).type(JSON_TYPE).send(JSON.stringify({ data: kept.value }));
  const body = v1ErrorBody({ id: kept.requestId ?? request.id }, kept.error);
  return reply.code(httpStatusOf[kept.error.code]).type(JSON_TYPE).send(JSON.stringify(body));
}

export interface IdempotencyDeps {
  pool: pg.Pool;
  clock: Clock;
}

/**
 * Where a POST's outcome is kept, for the one domain call its route makes: under its
 * Idempotency-Key when it sent one (a repeat with the same key and fingerprint replays it), with
 * the refusals worth keeping.
 */
export function onceFor(request: FastifyRequest): OnceOptions {
  return { once: requestKey(request), keeps: storable };
}

/**
 * A POST that changes nothing (the planner): without an Idempotency-Key it runs outside any
 * transaction; with one, its result is still kept and replayed.
 */
export function idempotentRead<T>(deps: IdempotencyDeps, handler: (request: FastifyRequest) => Promise<T>) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const key = requestKey(request);
    if (!key) return reply.code(200).send({ data: await handler(request) });
    const kept = await recordOnce(deps.pool, { key, now: deps.clock.now(), keeps: storable }, () => handler(request));
    return sendKept(request, reply, kept, 200);
  };
}

/**
 * Checks the Idempotency-Key header before validation, so a missing one is a 400, not a 422,
 * and takes the request's fingerprint from the body as sent. Attached only to routes whose
 * config names an idempotency mode: other routes pay nothing.
 */
export const idempotencyKeyCheck = fp(
  async function idempotencyKeyCheck(app: FastifyInstance) {
    app.addHook('onRoute', (route) => {
      const mode = route.config?.idempotency;
      if (!mode) return;
      // The header as the OpenAPI document shows it; the check below is what enforces it.
      if (!route.schema?.headers) route.schema = { ...route.schema, headers: idempotencyHeaders[mode] };
      const check = async (request: FastifyRequest) => {
        const key = request.headers['idempotency-key'];
        // No key, or a blank one (idempotencyKeyOf reads it as none); repeated headers are checked below.
        if (key === undefined || (typeof key === 'string' && idempotencyKeyOf(request) === undefined)) {
          if (mode === 'required') {
            throw new DomainError('idempotency_key_required', 'Send an Idempotency-Key header (any unique string, e.g. a UUID) with this request.');
          }
          return;
        }
        // Node joins repeated headers with ", ", which no key can contain.
        if (request.raw.rawHeaders.filter((h, i) => i % 2 === 0 && h.toLowerCase() === 'idempotency-key').length > 1) {
          throw new DomainError('bad_request', 'Send one Idempotency-Key header, not several.');
        }
        if (typeof key !== 'string' || !KEY_PATTERN.test(key)) {
          throw new DomainError('bad_request', 'The Idempotency-Key header must be 1–255 visible ASCII characters.');
        }
        try {
          fingerprints.set(request, computeFingerprint(request));
        } catch {
          // Only an unpaired UTF-16 surrogate (a key's or a value's) has no canonical JSON; such a
          // body is refused here as validation would refuse it, naming the field.
          throw invalidInput({ [unstorableTextPath(request.body) || 'body']: [UNSTORABLE_TEXT_MESSAGE] });
        }
      };
      const existing = route.preValidation;
      route.preValidation = existing ? [check, ...(Array.isArray(existing) ? existing : [existing])] : [check];
    });
  },
  { name: 'idempotency-key-check' },
);
