import type pg from 'pg';
import { isoSeconds } from '../../common/iso-seconds.js';
import { type Tx, withTransaction } from '../../db/tx.js';
import type { Clock } from '../clock.js';
import { DomainError, invalidInput } from '../errors.js';

/**
 * Record once: a piece of work runs in one transaction with the record of its outcome, under a
 * lock on the record's key, so a crash keeps both or neither and a repeat gets the stored answer
 * instead of running the work again. Two books keep records:
 *
 * - `request`: a REST `Idempotency-Key`, scoped to the API key, kept 24 h. A repeat while the
 *   first still runs is refused at once (409 `idempotency_in_progress`); the same key with
 *   another fingerprint is 422 `idempotency_key_reused`.
 * - `confirmation`: an MCP quote's confirmation token, kept for good. A repeat while the first
 *   still runs waits for it and then answers its stored result.
 * - `person`: the idempotency key a console confirmation form carries, scoped to the signed-in
 *   person, kept 24 h. A form sent twice (a double click) waits for the first and answers its
 *   result, as a confirmation does: the browser shows the second answer, so it must be the first's.
 *
 * The key's lock is a transaction-scoped advisory lock; the lookup is a statement of its own after
 * it, so its snapshot sees the record of a transaction that held the lock until just now.
 */

export const RETENTION_MS = 24 * 3_600_000;

export type OnceKey =
  | { book: 'request'; apiKeyId: number; key: string; fingerprint: string }
  | { book: 'confirmation'; apiKeyId: number; tokenId: string; tool: string; argumentsHash: string; expiresAt: number }
  | { book: 'person'; userId: number; key: string; fingerprint: string };

/** What a repeat gets back: a status and the exact JSON text of the first answer. */
export interface StoredAnswer {
  status: number;
  json: string;
}

export interface Answer extends StoredAnswer {
  replayed: boolean;
}

/** The work's result or its refusal. */
export type Outcome<T> = { ok: true; value: T } | { ok: false; error: DomainError };

export interface RecordOnceOptions<T> {
  /** None: the work runs in a plain transaction and its outcome is answered, not kept. */
  key: OnceKey | undefined;
  now: number;
  /**
   * How an outcome is answered and kept; `undefined` for a refusal that is not kept (it is thrown,
   * and the transaction rolls back). Successes are always kept.
   */
  encode: (outcome: Outcome<T>) => StoredAnswer | undefined;
  /**
   * The work refuses (throws a DomainError) only before its first write: a kept refusal then
   * needs no savepoint to undo its work.
   */
  refusesBeforeWriting?: boolean;
}

export const inProgress = () =>
  new DomainError('idempotency_in_progress', 'A request with this Idempotency-Key is still being processed. Retry shortly.');
export const reusedKey = () =>
  new DomainError('idempotency_key_reused', 'This Idempotency-Key was already used for a different request. Use a new key for a new request.');
/** A confirmation token that cannot be used, and why. */
export const refusedConfirmation = (why: string) =>
  invalidInput(
    { confirmation_token: [why] },
    `The confirmation_token was refused: ${why}. Nothing was spent. Call the tool again without confirmation_token for a new quote, show it to the user and get their explicit confirmation.`,
  );
const mismatch = () => refusedConfirmation('it does not match the call it was used for');

const statements = {
  lock: { name: 'once_lock', text: 'SELECT pg_advisory_xact_lock($1, hashtext($2))' },
  tryLockRequests: {
    name: 'once_try_lock_requests',
    // Also sets the transaction's lock_timeout ($3) and plan_cache_mode ($4) (NULL keeps each):
    // the claims themselves never wait.
    text: `SELECT pg_try_advisory_xact_lock(x.api_key_id, hashtext(x.key)) AS ok
             FROM (SELECT set_config('lock_timeout', COALESCE($3, current_setting('lock_timeout')), true),
                          set_config('plan_cache_mode', COALESCE($4, current_setting('plan_cache_mode')), true)) AS settings,
                  unnest($1::int[], $2::text[]) WITH ORDINALITY AS x(api_key_id, key, n)
            ORDER BY x.n`,
  },
  findRequests: {
    name: 'once_find_requests',
    text: `SELECT x.n::int AS n, r.fingerprint, r.response_status, r.response_body
             FROM unnest($1::int[], $2::text[]) WITH ORDINALITY AS x(api_key_id, key, n)
             JOIN idempotency_records r ON r.api_key_id = x.api_key_id AND r.key = x.key AND r.expires_at > $3`,
  },
  storeRequests: {
    name: 'once_store_requests',
    text: `INSERT INTO idempotency_records (api_key_id, key, fingerprint, response_status, response_body, created_at, expires_at)
           SELECT x.api_key_id, x.key, x.fingerprint, x.status, x.body, $6, $7
             FROM unnest($1::int[], $2::text[], $3::text[], $4::int[], $5::text[]) AS x(api_key_id, key, fingerprint, status, body)
           ON CONFLICT (api_key_id, key) DO UPDATE
              SET fingerprint = EXCLUDED.fingerprint, response_status = EXCLUDED.response_status,
                  response_body = EXCLUDED.response_body, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
            WHERE idempotency_records.expires_at <= EXCLUDED.created_at`,
  },
  findConfirmation: {
    name: 'once_find_confirmation',
    text: 'SELECT api_key_id, tool, arguments_hash, result::text AS result FROM mcp_confirmations WHERE token_id = $1',
  },
  findPerson: {
    name: 'once_find_person',
    text: 'SELECT fingerprint, response_status, response_body FROM person_idempotency_records WHERE user_id = $1 AND key = $2 AND expires_at > $3',
  },
  storePerson: {
    name: 'once_store_person',
    text: `INSERT INTO person_idempotency_records (user_id, key, fingerprint, response_status, response_body, created_at, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7)
           ON CONFLICT (user_id, key) DO UPDATE
              SET fingerprint = EXCLUDED.fingerprint, response_status = EXCLUDED.response_status,
                  response_body = EXCLUDED.response_body, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
            WHERE person_idempotency_records.expires_at <= EXCLUDED.created_at`,
  },
  storeConfirmation: {
    name: 'once_store_confirmation',
    text: `INSERT INTO mcp_confirmations (token_id, api_key_id, tool, arguments_hash, result, created_at) VALUES ($1, $2, $3, $4, $5::json, $6)`,
  },
};

// The books' keys share one advisory lock space (an API key's id, or a person's); a collision
// only makes two unrelated requests wait for each other.
const lockText = (key: OnceKey) => (key.book === 'request' ? key.key : key.book === 'person' ? `person:${key.key}` : `confirmation:${key.tokenId}`);
const lockSpace = (key: OnceKey) => (key.book === 'person' ? key.userId : key.apiKeyId);

/** The stored answer of a key, read outside any transaction (a used, expired token still replays). */
export async function findAnswer(q: pg.Pool | Tx, key: OnceKey, now: number): Promise<StoredAnswer | undefined> {
  if (key.book === 'request') {
    const { rows } = await q.query<{ fingerprint: string; response_status: number; response_body: string }>({
      ...statements.findRequests,
      values: [[key.apiKeyId], [key.key], new Date(now)],
    });
    const r = rows[0];
    if (!r) return undefined;
    if (r.fingerprint !== key.fingerprint) throw reusedKey();
    return { status: r.response_status, json: r.response_body };
  }
  if (key.book === 'person') {
    const { rows } = await q.query<{ fingerprint: string; response_status: number; response_body: string }>({
      ...statements.findPerson,
      values: [key.userId, key.key, new Date(now)],
    });
    const r = rows[0];
    if (!r) return undefined;
    if (r.fingerprint !== key.fingerprint) throw reusedKey();
    return { status: r.response_status, json: r.response_body };
  }
  const { rows } = await q.query<{ api_key_id: number; tool: string; arguments_hash: string; result: string }>({
    ...statements.findConfirmation,
    values: [key.tokenId],
  });
  const r = rows[0];
  if (!r) return undefined;
  if (r.api_key_id !== key.apiKeyId || r.tool !== key.tool || r.arguments_hash !== key.argumentsHash) throw mismatch();
  return { status: 200, json: r.result };
}

async function store(tx: Tx, key: OnceKey, answer: StoredAnswer, now: number): Promise<void> {
  if (key.book === 'request') {
    await tx.query({
      ...statements.storeRequests,
      values: [[key.apiKeyId], [key.key], [key.fingerprint], [answer.status], [answer.json], new Date(now), new Date(now + RETENTION_MS)],
    });
  } else if (key.book === 'person') {
    await tx.query({
      ...statements.storePerson,
      values: [key.userId, key.key, key.fingerprint, answer.status, answer.json, new Date(now), new Date(now + RETENTION_MS)],
    });
  } else {
    await tx.query({ ...statements.storeConfirmation, values: [key.tokenId, key.apiKeyId, key.tool, key.argumentsHash, answer.json, new Date(now)] });
  }
}

const SAVEPOINT = 'record_once_work';

/**
 * Runs `work` in one transaction and answers its outcome, kept under `key` in that transaction:
 * a success with what it wrote, a kept refusal (the caller's `encode` says which) with none of
 * the refused work. A repeat of a kept key answers the stored bytes with `replayed: true` and
 * runs nothing.
 */
export async function recordOnce<T>(pool: pg.Pool, opts: RecordOnceOptions<T>, work: (tx: Tx) => Promise<T>): Promise<Answer> {
  const { key, now, encode } = opts;
  // Without a key nothing is kept: a refusal is thrown and its transaction rolls back.
  if (!key) return { ...(await withTransaction(pool, async (tx) => encode({ ok: true, value: await work(tx) })!)), replayed: false };
  if (key.book === 'confirmation' && key.expiresAt <= now) {
    // A used token still answers its result once expired; an unused one spends nothing.
    const found = await findAnswer(pool, key, now);
    if (found) return { ...found, replayed: true };
    throw refusedConfirmation(`it expired at ${isoSeconds(key.expiresAt)} (quotes are valid for 10 minutes)`);
  }
  return withTransaction(pool, async (tx) => {
    if (key.book === 'request') {
      const { rows } = await tx.query<{ ok: boolean }>({ ...statements.tryLockRequests, values: [[key.apiKeyId], [lockText(key)], null, null] });
      if (!rows[0]!.ok) throw inProgress();
    } else {
      await tx.query({ ...statements.lock, values: [lockSpace(key), lockText(key)] });
    }
    const found = await findAnswer(tx, key, now);
    if (found) return { ...found, replayed: true };
    const undoable = !opts.refusesBeforeWriting;
    if (undoable) await tx.query(`SAVEPOINT ${SAVEPOINT}`);
    let answer: StoredAnswer;
    try {
      answer = encode({ ok: true, value: await work(tx) })!;
    } catch (error) {
      const kept = error instanceof DomainError ? encode({ ok: false, error }) : undefined;
      if (!kept) throw error;
      // A kept refusal is recorded in this transaction, under the key's lock, so no retry can
      // run between the refusal and its record; what the work wrote before refusing is undone.
      if (undoable) await tx.query(`ROLLBACK TO SAVEPOINT ${SAVEPOINT}`);
      answer = kept;
    }
    await store(tx, key, answer, now);
    return { ...answer, replayed: false };
  });
}

/** Where an action's outcome is kept (none: nowhere, it just runs) and how it is answered. */
export interface OnceOptions<T> {
  once: OnceKey | undefined;
  encode: (outcome: Outcome<T>) => StoredAnswer | undefined;
}

/**
 * One action as an adapter calls it: its own transaction at the clock's time, kept once under
 * `options.once` (`recordOnce`), answered as `options.encode` says.
 */
export function runOnce<T>(deps: { pool: pg.Pool; clock: Clock }, options: OnceOptions<T>, work: (tx: Tx, now: number) => Promise<T>): Promise<Answer> {
  const now = deps.clock.now();
  return recordOnce(deps.pool, { key: options.once, now, encode: options.encode }, (tx) => work(tx, now));
}

export type RequestKey = Extract<OnceKey, { book: 'request' }>;

/** One item of `recordEach`: its key and how its outcome is answered and kept. */
export interface EachItem<T> {
  key: RequestKey;
  encode: (outcome: Outcome<T>) => StoredAnswer | undefined;
}

/** An item's own result: its answer, or the error it alone gets (key in use, key reused, a refusal not kept). */
export type EachResult = { ok: true; value: Answer } | { ok: false; error: unknown };

/**
 * `recordOnce` for several REST requests in one transaction: their keys are claimed and looked up
 * in one statement each, the work runs for those neither replayed nor refused, and every record
 * goes in one statement before COMMIT. Each item gets the answer it would get alone. The work
 * answers each admitted item's outcome; it must refuse only before its first write (nothing is
 * undone for one item), and anything it throws fails every item.
 */
export async function recordEach<T>(
  pool: pg.Pool,
  items: Array<EachItem<T>>,
  now: number,
  work: (tx: Tx, admitted: number[]) => Promise<Array<Outcome<T>>>,
  /** How long the transaction may wait for any one lock (none: the statement timeout). */
  lockTimeoutMs?: number,
): Promise<EachResult[]> {
  const apiKeyIds = items.map((i) => i.key.apiKeyId);
  const keys = items.map((i) => i.key.key);
  return withTransaction(pool, async (tx) => {
    const timeout = lockTimeoutMs === undefined ? null : `${lockTimeoutMs}ms`;
    // The group's statements take arrays whose length changes with the group, so PostgreSQL would
    // keep planning them anew (custom plans): for the placement's statements that was most of
    // their database time. Their generic plans, made once per connection, are as good.
    const locked = (await tx.query<{ ok: boolean }>({ ...statements.tryLockRequests, values: [apiKeyIds, keys, timeout, 'force_generic_plan'] })).rows;
    const found = new Map(
      (await tx.query<{ n: number; fingerprint: string; response_status: number; response_body: string }>({
        ...statements.findRequests,
        values: [apiKeyIds, keys, new Date(now)],
      })).rows.map((r) => [r.n - 1, r]),
    );
    const results: EachResult[] = [];
    const admitted: number[] = [];
    items.forEach((item, i) => {
      const record = found.get(i);
      if (!locked[i]!.ok) results[i] = { ok: false, error: inProgress() };
      else if (record && record.fingerprint !== item.key.fingerprint) results[i] = { ok: false, error: reusedKey() };
      else if (record) results[i] = { ok: true, value: { status: record.response_status, json: record.response_body, replayed: true } };
      else admitted.push(i);
    });
    const outcomes = admitted.length ? await work(tx, admitted) : [];
    const kept: number[] = [];
    const answers: StoredAnswer[] = [];
    admitted.forEach((i, k) => {
      const outcome = outcomes[k]!;
      const answer = items[i]!.encode(outcome);
      if (!answer) {
        results[i] = { ok: false, error: outcome.ok ? new Error('a success must be kept') : outcome.error };
        return;
      }
      results[i] = { ok: true, value: { ...answer, replayed: false } };
      kept.push(i);
      answers.push(answer);
    });
    if (kept.length) {
      await tx.query({
        ...statements.storeRequests,
        values: [
          kept.map((i) => apiKeyIds[i]),
          kept.map((i) => keys[i]),
          kept.map((i) => items[i]!.key.fingerprint),
          answers.map((a) => a.status),
          answers.map((a) => a.json),
          new Date(now),
          new Date(now + RETENTION_MS),
        ],
      });
    }
    return results;
  });
}
