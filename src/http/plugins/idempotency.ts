import { hash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type pg from 'pg';
import { executeSql, type PreparedSql, type SqlValue, type Tx, withTransaction } from '../../db/tx.js';
import type { Clock } from '../../domain/clock.js';
import { DomainError } from '../../domain/errors.js';
import { canonicalJson } from '../../shared/canonical-json.js';
import { z } from 'zod';
import { httpStatusOf, v1ErrorBody } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** POSTs under /api/v1 honour Idempotency-Key; `required` refuses requests without one. */
    idempotency?: 'required' | 'optional';
  }
}

export const RETENTION_MS = 24 * 3_600_000;

const keyHeader = z
  .string()
  .describe('Any unique string of 1–255 visible ASCII characters (e.g. a UUID). A retry with the same key within 24 h replays the first answer.');
// Loose: Fastify replaces request.headers with the validated value, which must keep every header.
const idempotencyHeaders = {
  required: z.looseObject({ 'idempotency-key': keyHeader }),
  optional: z.looseObject({ 'idempotency-key': keyHeader.optional() }),
};
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export const statements = {
  lock: { name: 'idem_lock', types: ['int', 'text'], text: 'SELECT pg_try_advisory_xact_lock($1, hashtext($2)) AS ok' },
  find: {
    name: 'idem_find',
    types: ['int', 'text'],
    text: 'SELECT fingerprint, response_status, response_body, expires_at FROM idempotency_records WHERE api_key_id = $1 AND key = $2',
  },
  // Also replaces an expired record of the key (retention is 24 h); a live one cannot be there,
  // the lock and the lookup having found none.
  store: {
    name: 'idem_store',
    types: ['int', 'text', 'text', 'int', 'text', 'timestamptz', 'timestamptz'],
    text: `INSERT INTO idempotency_records (api_key_id, key, fingerprint, response_status, response_body, created_at, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7)
           ON CONFLICT (api_key_id, key) DO UPDATE
              SET fingerprint = EXCLUDED.fingerprint, response_status = EXCLUDED.response_status,
                  response_body = EXCLUDED.response_body, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
            WHERE idempotency_records.expires_at <= EXCLUDED.created_at`,
  },
} satisfies Record<string, PreparedSql>;
const preparedStatements = Object.values(statements);

// The work runs after this savepoint: a refusal (402, 409) rolls back to it and is recorded in the
// same transaction, under the same lock, so no retry with the key can run between the refusal
// and its record (one did: a 402 answered while the retry placed the order).
const WORK_SAVEPOINT = 'idem_work';

export interface Outcome {
  status: number;
  body: unknown;
}

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

export const inProgress = () =>
  new DomainError('idempotency_in_progress', 'A request with this Idempotency-Key is still being processed. Retry shortly.');
export const reusedKey = () =>
  new DomainError('idempotency_key_reused', 'This Idempotency-Key was already used for a different request. Use a new key for a new request.');

export interface IdempotencyDeps {
  pool: pg.Pool;
  clock: Clock;
}

/**
 * The statements a handler runs first, when they can be known from the request alone: they then
 * run in the transaction's opening batch, with the idempotency lock and lookup, one round trip
 * fewer. On a replay or a refused key they roll back with their transaction, having changed nothing.
 * They run before the record is looked at, so they must not fail where a replay should answer:
 * a guarded write (placement writes nothing unless its checks pass), not one that can conflict.
 */
export type Lead = Array<{ sql: PreparedSql; values: SqlValue[] }>;

/** What a handler gets besides its transaction: the request's time and its lead's results. */
export interface Work {
  now: number;
  lead: pg.QueryResult[] | undefined;
}

type Handler = (request: FastifyRequest, tx: Tx, work: Work) => Promise<Outcome>;

/**
 * Wraps a POST handler: runs it in one transaction and, when the request carries an
 * Idempotency-Key, stores its outcome in that same transaction, under the key's lock (a crash
 * keeps both or neither): a success with what it wrote, a refusal (402, 409) with nothing of the
 * refused work. A repeat with the same key and fingerprint replays the stored status and body.
 */
export function idempotent(deps: IdempotencyDeps, handler: Handler, lead?: (request: FastifyRequest, now: number) => Lead | undefined) {
  return idempotentWith(deps, handler, true, lead);
}

/**
 * The same for a POST that changes nothing (the planner): without an Idempotency-Key it runs
 * outside any transaction; with one, its response is still recorded and replayed.
 */
export function idempotentRead(deps: IdempotencyDeps, handler: (request: FastifyRequest) => Promise<Outcome>) {
  return idempotentWith(deps, (request) => handler(request), false, undefined);
}

/** A replay found after the lead ran: the transaction must roll back, not commit. */
class Replay {
  constructor(readonly status: number, readonly json: string) {}
}

/** The request's Idempotency-Key; an empty or blank header sends none (the contract's answer for a missing one). */
function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const key = request.headers['idempotency-key'];
  return typeof key === 'string' && key.trim() !== '' ? key : undefined;
}

function idempotentWith(
  deps: IdempotencyDeps,
  handler: Handler,
  transactional: boolean,
  leadOf: ((request: FastifyRequest, now: number) => Lead | undefined) | undefined,
) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const key = idempotencyKeyOf(request);
    const now = deps.clock.now();
    const lead = leadOf?.(request, now);
    const leadSql = lead?.map((st) => executeSql(st.sql, st.values)) ?? [];
    const leadPrepared = lead?.map((st) => st.sql) ?? [];
    if (typeof key !== 'string') {
      const out = transactional
        ? await withTransaction(deps.pool, (tx, ran) => handler(request, tx, { now, lead: lead && ran }), {
            prepared: leadPrepared,
            afterBegin: leadSql,
          })
        : await handler(request, undefined as never, { now, lead: undefined });
      return reply.code(out.status).send(out.body);
    }
    const keyId = request.principal!.keyId;
    const fingerprint = fingerprintOf(request);
    // The record's values, stored with COMMIT.
    const record = (r: { status: number; json: string }) => [keyId, key, fingerprint, r.status, r.json, new Date(now), new Date(now + RETENTION_MS)];
    const lockAndFind = [
      // The lookup is its own statement, after the lock: each statement of a batch reads a fresh
      // snapshot, so it sees the record of a request that held the lock until just now.
      executeSql(statements.lock, [keyId, key]),
      executeSql(statements.find, [keyId, key]),
      `SAVEPOINT ${WORK_SAVEPOINT}`,
      ...leadSql,
    ];
    // The body travels as the JSON text that is stored, so a replay sends the same bytes.
    type Result = { status: number; json: string; replayed: boolean; refused?: boolean };
    let out: Result;
    try {
      out = await withTransaction<Result>(
        deps.pool,
        async (tx, [lock, find, , ...ran]) => {
          if (!lock!.rows[0]!.ok) {
            throw inProgress();
          }
          const found = find!.rows[0] as { fingerprint: string; response_status: number; response_body: string; expires_at: Date } | undefined;
          if (found && found.expires_at.getTime() > now) {
            if (found.fingerprint !== fingerprint) {
              throw reusedKey();
            }
            if (lead) throw new Replay(found.response_status, found.response_body);
            return { status: found.response_status, json: found.response_body, replayed: true };
          }
          try {
            const done = await handler(request, tx, { now, lead: lead && ran });
            return { status: done.status, json: JSON.stringify(done.body), replayed: false };
          } catch (err) {
            if (!(err instanceof DomainError) || !storable(err)) throw err;
            return { status: httpStatusOf[err.code], json: JSON.stringify(v1ErrorBody(request, err)), replayed: false, refused: true };
          }
        },
        {
          prepared: [...preparedStatements, ...leadPrepared],
          afterBegin: lockAndFind,
          // The record goes with COMMIT: one round trip, and a crash keeps both or neither. A
          // refusal first undoes whatever the refused work had done.
          beforeCommit: (r) =>
            r.replayed ? [] : [...(r.refused ? [`ROLLBACK TO SAVEPOINT ${WORK_SAVEPOINT}`] : []), executeSql(statements.store, record(r))],
        },
      );
    } catch (err) {
      if (!(err instanceof Replay)) throw err;
      out = { status: err.status, json: err.json, replayed: true };
    }
    if (out.replayed) reply.header('idempotent-replayed', 'true');
    return reply.code(out.status).type('application/json; charset=utf-8').send(out.json);
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
        fingerprints.set(request, computeFingerprint(request));
      };
      const existing = route.preValidation;
      route.preValidation = existing ? [check, ...(Array.isArray(existing) ? existing : [existing])] : [check];
    });
  },
  { name: 'idempotency-key-check' },
);
