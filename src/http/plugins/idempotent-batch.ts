import type { FastifyRequest } from 'fastify';
import type pg from 'pg';
import { executeSql, PROCEED_SETTING, type PreparedSql, type Tx, withTransaction } from '../../db/tx.js';
import { DomainError } from '../../domain/errors.js';
import type { JobResult } from '../../db/group-commit.js';
import { httpStatusOf, v1ErrorBody } from './errors.js';
import {
  fingerprintOf,
  type IdempotencyDeps,
  inProgress,
  type Lead,
  type Outcome,
  RETENTION_MS,
  reusedKey,
  statements,
  storable,
} from './idempotency.js';

/**
 * One POST with an Idempotency-Key whose work is statements known from the request alone, each
 * writing only when `proceedGuard` holds (a guarded placement, say).
 */
export interface BatchedRequest {
  request: FastifyRequest;
  now: number;
  /** Its statements, run in the batch's opening round trip right after its key is claimed. */
  lead: Lead;
  /** Judges what the lead returned, in the still open transaction: the outcome, or a DomainError (having written nothing). */
  handle: (tx: Tx, ran: pg.QueryResult[]) => Promise<Outcome>;
  /** Throws if the lead wrote anything; called when the request is answered without `handle`. */
  assertUnwritten: (ran: pg.QueryResult[]) => void;
}

/** A request's answer: the status and the JSON text, stored and replayed as these bytes. */
export interface Answer {
  status: number;
  json: string;
  replayed: boolean;
}

// The key's lock and its lookup, each turning the guard on or off for the statements after them.
// Two statements, as in the single path: each statement of a batch reads a fresh snapshot, so the
// lookup, after the lock, sees the record of a request that held the lock until just now.
const claim = {
  name: 'idem_claim',
  types: ['int', 'text'],
  text: `SELECT set_config('${PROCEED_SETTING}', pg_try_advisory_xact_lock($1, hashtext($2))::text, true) = 'true' AS locked`,
} satisfies PreparedSql;
const findLive = {
  name: 'idem_find_live',
  types: ['int', 'text', 'timestamptz'],
  text: `SELECT r.fingerprint, r.response_status, r.response_body,
                set_config('${PROCEED_SETTING}', (current_setting('${PROCEED_SETTING}') = 'true' AND r.api_key_id IS NULL)::text, true) AS proceed
           FROM (SELECT) AS one LEFT JOIN idempotency_records r ON r.api_key_id = $1 AND r.key = $2 AND r.expires_at > $3`,
} satisfies PreparedSql;

/** Requests that may not share a group: the same key of the same API key (its lock is re-entrant). */
export const batchIdentity = (request: FastifyRequest) => `${request.principal!.keyId}:${String(request.headers['idempotency-key'])}`;

type Decided = { answer: Answer; store: boolean } | { error: DomainError };

/** The statements a group runs first, once, for all of its requests (the locks they all need). */
export type Opening = (requests: BatchedRequest[]) => Lead;

/**
 * Runs several idempotent requests in one transaction and two round trips: BEGIN, the opening
 * statements, then for each request its key's claim, its lookup and its lead; then every record
 * with COMMIT. Each request keeps the single path's guarantees: its record is written in the
 * transaction that did its work, a replay or a refusal writes no work, a key in use by another
 * transaction is a 409. No two requests of a group may have one `batchIdentity`. A group fails as
 * a whole (a statement's error, a lock waited for longer than `lockTimeoutMs`); its caller may then
 * run each request again alone (GroupCommit does).
 */
export async function runIdempotentBatch(
  deps: IdempotencyDeps,
  openingOf: Opening,
  requests: BatchedRequest[],
  /** How long to wait for a lock before failing (none: as long as the statement timeout lets it). */
  lockTimeoutMs?: number,
): Promise<Array<JobResult<Answer>>> {
  const opening = openingOf(requests);
  const keyOf = (r: BatchedRequest) => [r.request.principal!.keyId, String(r.request.headers['idempotency-key'])] as const;
  const prepared = [claim, findLive, statements.store, ...opening.map((st) => st.sql), ...requests.flatMap((r) => r.lead.map((st) => st.sql))];
  const settings = lockTimeoutMs === undefined ? [] : [`SET LOCAL lock_timeout = ${lockTimeoutMs}`];
  const afterBegin = [
    ...settings,
    ...opening.map((st) => executeSql(st.sql, st.values)),
    ...requests.flatMap((r) => {
      const [keyId, key] = keyOf(r);
      return [executeSql(claim, [keyId, key]), executeSql(findLive, [keyId, key, new Date(r.now)]), ...r.lead.map((st) => executeSql(st.sql, st.values))];
    }),
  ];
  const decided = await withTransaction<Decided[]>(
    deps.pool,
    async (tx, ran) => {
      let at = settings.length + opening.length;
      const out: Decided[] = [];
      for (const r of requests) {
        const [locked, found, ...own] = ran.slice(at, at + 2 + r.lead.length);
        at += 2 + r.lead.length;
        out.push(await decide(tx, r, locked!, found!, own));
      }
      return out;
    },
    {
      prepared,
      afterBegin,
      beforeCommit: (out) =>
        out.flatMap((d, i) => {
          if (!('answer' in d) || !d.store) return [];
          const r = requests[i]!;
          const [keyId, key] = keyOf(r);
          const fingerprint = fingerprintOf(r.request);
          return [executeSql(statements.store, [keyId, key, fingerprint, d.answer.status, d.answer.json, new Date(r.now), new Date(r.now + RETENTION_MS)])];
        }),
    },
  );
  return decided.map((d) => ('answer' in d ? { ok: true, value: d.answer } : { ok: false, error: d.error }));
}

async function decide(tx: Tx, r: BatchedRequest, locked: pg.QueryResult, found: pg.QueryResult, own: pg.QueryResult[]): Promise<Decided> {
  if (!locked.rows[0]!.locked) {
    r.assertUnwritten(own);
    return { error: inProgress() };
  }
  const record = found.rows[0] as { fingerprint: string | null; response_status: number; response_body: string };
  if (record.fingerprint !== null) {
    r.assertUnwritten(own);
    if (record.fingerprint !== fingerprintOf(r.request)) return { error: reusedKey() };
    return { answer: { status: record.response_status, json: record.response_body, replayed: true }, store: false };
  }
  try {
    const done = await r.handle(tx, own);
    return { answer: { status: done.status, json: JSON.stringify(done.body), replayed: false }, store: true };
  } catch (err) {
    // Anything but a DomainError fails the whole batch (and each request then runs alone).
    if (!(err instanceof DomainError)) throw err;
    if (!storable(err)) return { error: err };
    return { answer: { status: httpStatusOf[err.code], json: JSON.stringify(v1ErrorBody(r.request, err)), replayed: false }, store: true };
  }
}
