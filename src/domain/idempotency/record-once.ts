import type pg from 'pg';
import { isoSeconds } from '../../common/iso-seconds.js';
import { commitWith, type Db, type Statement, withTransaction } from '../../db/handle.js';
import { type Param, param, sql, statement } from '../../db/sql.js';
import { constraintOf, pgErrorCode } from '../../db/errors.js';
import type { Clock } from '../clock.js';
import { DomainError, invalidInput } from '../errors.js';

/**
 * Record once: a piece of work runs in one transaction with the record of its outcome, under a
 * lock on the record's key, so a crash keeps both or neither and a repeat gets the stored answer
 * instead of running the work again. What is kept is the domain's outcome, which each adapter
 * encodes as it encodes a first answer. Three books keep records:
 *
 * - `request`: a REST `Idempotency-Key`, scoped to the API key, kept 24 h. A repeat while the
 *   first still runs is refused at once (409 `idempotency_in_progress`); the same key with
 *   another fingerprint is 422 `idempotency_key_reused`.
 * - `confirmation`: an MCP quote's confirmation token, kept for good. A repeat while the first
 *   still runs waits for it and then answers its stored result.
 * - `person`: a console form's idempotency key, scoped to the signed-in person, kept 24 h. A
 *   repeat while the first still runs waits for it, then answers its outcome.
 *
 * The key's lock is a transaction-scoped advisory lock. For one call (`recordOnce`) the lookup is
 * a statement of its own after it, so its snapshot sees the record of a transaction that held the
 * lock until just now. A group (`recordEach`) claims and looks up in one statement, whose snapshot
 * is older than its claims: instead, its records are plain INSERTs, which a record it missed
 * fails, and it looks up again the keys it would otherwise leave without a record.
 */

export const RETENTION_MS = 24 * 3_600_000;

export type OnceKey =
  | {
      book: 'request';
      apiKeyId: number;
      key: string;
      fingerprint: string;
      /** The request that runs the work: a kept refusal names it, on its replays too. */
      requestId: string;
    }
  | { book: 'confirmation'; apiKeyId: number; tokenId: string; tool: string; argumentsHash: string; expiresAt: number }
  | { book: 'person'; userId: number; key: string; fingerprint: string };

/** The work's result or its refusal. */
export type Outcome<T> = { ok: true; value: T } | { ok: false; error: DomainError };

/**
 * What a call answers: its outcome (a refusal here is one that was kept; others are thrown),
 * whether it is the replay of a kept one, and the request that ran it (REST names it in a
 * refusal). A replay's value is the first call's, read back from its JSON text.
 */
export type Kept<T> = Outcome<T> & { replayed: boolean; requestId?: string | undefined };

export interface RecordOnceOptions {
  /** None: the work runs in a plain transaction and its outcome is answered, not kept. */
  key: OnceKey | undefined;
  now: number;
  /** Which refusals are kept (answered again to a repeat); none unless said. Successes are always kept. */
  keeps?: ((error: DomainError) => boolean) | undefined;
  /**
   * The work refuses (throws a DomainError) only before its first write: a kept refusal then
   * needs no savepoint to undo its work.
   */
  refusesBeforeWriting?: boolean;
}

/**
 * The record of an outcome, as JSON text: `{"value":…}` or `{"error":{code,message,details},
 * "request_id":…}`. It holds the domain's result, not an answer: each adapter encodes it as it
 * encodes the first, and JSON text read back gives the same value, so a replay's bytes are the
 * first answer's.
 */
function recordOf<T>(outcome: Outcome<T>, requestId: string | undefined): string {
  if (outcome.ok) return JSON.stringify({ value: outcome.value });
  const { code, message, details } = outcome.error;
  return JSON.stringify({ error: { code, message, details }, request_id: requestId });
}

function keptOf<T>(record: string): Kept<T> {
  const r = JSON.parse(record) as { value: T } | { error: Pick<DomainError, 'code' | 'message' | 'details'>; request_id?: string };
  if ('value' in r) return { ok: true, value: r.value, replayed: true };
  return { ok: false, error: new DomainError(r.error.code, r.error.message, r.error.details), replayed: true, requestId: r.request_id };
}

const requestIdOf = (key: OnceKey | undefined) => (key?.book === 'request' ? key.requestId : undefined);

/** The value of a call whose refusals are not kept (they are thrown, so `kept` is a success). */
export function valueOf<T>(kept: Kept<T>): T {
  if (!kept.ok) throw kept.error;
  return kept.value;
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

/** REST records as the INSERT binds them: one element per record, and the times they share. */
export interface RecordValues {
  apiKeyIds: number[];
  keys: string[];
  fingerprints: string[];
  outcomes: string[];
  createdAt: Date | null;
  expiresAt: Date | null;
}

/** The INSERT of REST records (`recordValues`). */
const eachInsert = (v: RecordValues) => sql`INSERT INTO idempotency_records (api_key_id, key, fingerprint, outcome, created_at, expires_at)
           SELECT x.api_key_id, x.key, x.fingerprint, x.outcome, ${v.createdAt}, ${v.expiresAt}
             FROM unnest(${v.apiKeyIds}::int[], ${v.keys}::text[], ${v.fingerprints}::text[], ${v.outcomes}::text[]) AS x(api_key_id, key, fingerprint, outcome)`;

/**
 * `recordOnce`'s INSERT of a REST record: a key that holds a live record keeps it (ON CONFLICT
 * sees every committed row, whatever the statement's snapshot, and updates only an expired one).
 * `recordEach`'s records are plain INSERTs (`eachInsert`): the claims deleted their keys' expired
 * records, and a live one must fail the group.
 */
const requestsInsert = (v: RecordValues) => sql`${eachInsert(v)}
           ON CONFLICT (api_key_id, key) DO UPDATE
              SET fingerprint = EXCLUDED.fingerprint, outcome = EXCLUDED.outcome,
                  created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
            WHERE idempotency_records.expires_at <= EXCLUDED.created_at`;

/** A group's keys as the claims bind them, and the time their records must outlive (one parameter, read twice). */
export interface ClaimValues {
  apiKeyIds: number[];
  keys: string[];
  at: Param;
}

/**
 * The claims of a group's keys (advisory locks tried, never waited for) and the lookup of their
 * records, as the WITH query `claimed` of a statement (values: `ClaimsInRead.values`): one row per key,
 * `n` its place from 1, `claim_ok` whether it was claimed, the live record's `claim_fingerprint`
 * and `claim_outcome` (null: none), and `claim_admitted`, whether the work goes on with it
 * (claimed, and no record: `admit` goes by it). The lookup reads as at the statement's start,
 * before the claims, so it may miss a record its key's last holder committed in between:
 * `recordEach` makes up for it. A claimed key's expired record is deleted here, so that the
 * group's records are plain INSERTs (`recordsWith`). (OFFSET 0 keeps the claim a subquery of its
 * own, so each key's lock is tried once however often its result is read.)
 */
export const claimsWith = (v: ClaimValues) => sql`claimed AS MATERIALIZED (
    SELECT x.n, x.api_key_id, x.key, t.claim_ok, r.fingerprint AS claim_fingerprint, r.outcome AS claim_outcome,
           t.claim_ok AND r.outcome IS NULL AS claim_admitted
      FROM unnest(${v.apiKeyIds}::int[], ${v.keys}::text[]) WITH ORDINALITY AS x(api_key_id, key, n)
      CROSS JOIN LATERAL (SELECT pg_try_advisory_xact_lock(x.api_key_id, hashtext(x.key)) AS claim_ok OFFSET 0) t
      LEFT JOIN idempotency_records r ON r.api_key_id = x.api_key_id AND r.key = x.key AND r.expires_at > ${v.at}),
  expired_deleted AS (
    DELETE FROM idempotency_records r USING claimed c
     WHERE c.claim_ok AND r.api_key_id = c.api_key_id AND r.key = c.key AND r.expires_at <= ${v.at})`;

const statements = {
  lock: { name: 'once_lock', text: 'SELECT pg_advisory_xact_lock($1, hashtext($2))' },
  tryLockRequests: {
    name: 'once_try_lock_requests',
    text: `SELECT pg_try_advisory_xact_lock(x.api_key_id, hashtext(x.key)) AS ok
             FROM unnest($1::int[], $2::text[]) AS x(api_key_id, key)`,
  },
  findRequests: {
    name: 'once_find_requests',
    text: `SELECT x.n::int AS n, r.fingerprint, r.outcome
             FROM unnest($1::int[], $2::text[]) WITH ORDINALITY AS x(api_key_id, key, n)
             JOIN idempotency_records r ON r.api_key_id = x.api_key_id AND r.key = x.key AND r.expires_at > $3`,
  },
  findConfirmation: {
    name: 'once_find_confirmation',
    text: 'SELECT api_key_id, tool, arguments_hash, outcome::text AS outcome FROM mcp_confirmations WHERE token_id = $1',
  },
  findPerson: {
    name: 'once_find_person',
    text: 'SELECT fingerprint, outcome FROM person_idempotency_records WHERE user_id = $1 AND key = $2 AND expires_at > $3',
  },
  storePerson: {
    name: 'once_store_person',
    text: `INSERT INTO person_idempotency_records (user_id, key, fingerprint, outcome, created_at, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (user_id, key) DO UPDATE
              SET fingerprint = EXCLUDED.fingerprint, outcome = EXCLUDED.outcome,
                  created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
            WHERE person_idempotency_records.expires_at <= EXCLUDED.created_at`,
  },
  storeConfirmation: {
    name: 'once_store_confirmation',
    text: `INSERT INTO mcp_confirmations (token_id, api_key_id, tool, arguments_hash, outcome, created_at) VALUES ($1, $2, $3, $4, $5::json, $6)`,
  },
};

// The books' keys share one advisory lock space (an API key's id, or a person's); a collision
// only makes two unrelated requests wait for each other.
const lockText = (key: OnceKey) => (key.book === 'request' ? key.key : key.book === 'person' ? `person:${key.key}` : `confirmation:${key.tokenId}`);
const lockSpace = (key: OnceKey) => (key.book === 'person' ? key.userId : key.apiKeyId);

/** The kept outcome of a key, read outside any transaction (a used, expired token still replays). */
export async function findKept<T>(q: Db, key: OnceKey, now: number): Promise<Kept<T> | undefined> {
  if (key.book === 'request') {
    const { rows } = await q.query<{ n: number; fingerprint: string; outcome: string }>({
      ...statements.findRequests,
      values: [[key.apiKeyId], [key.key], new Date(now)],
    });
    const r = rows[0];
    if (!r) return undefined;
    if (r.fingerprint !== key.fingerprint) throw reusedKey();
    return keptOf(r.outcome);
  }
  if (key.book === 'person') {
    const { rows } = await q.query<{ fingerprint: string; outcome: string }>({
      ...statements.findPerson,
      values: [key.userId, key.key, new Date(now)],
    });
    const r = rows[0];
    if (!r) return undefined;
    if (r.fingerprint !== key.fingerprint) throw reusedKey();
    return keptOf(r.outcome);
  }
  const { rows } = await q.query<{ api_key_id: number; tool: string; arguments_hash: string; outcome: string }>({
    ...statements.findConfirmation,
    values: [key.tokenId],
  });
  const r = rows[0];
  if (!r) return undefined;
  if (r.api_key_id !== key.apiKeyId || r.tool !== key.tool || r.arguments_hash !== key.argumentsHash) throw mismatch();
  return keptOf(r.outcome);
}

async function store(tx: Db, key: OnceKey, record: string, now: number): Promise<void> {
  if (key.book === 'request') {
    await tx.query(
      statement(
        requestsInsert({
          apiKeyIds: [key.apiKeyId],
          keys: [key.key],
          fingerprints: [key.fingerprint],
          outcomes: [record],
          createdAt: new Date(now),
          expiresAt: new Date(now + RETENTION_MS),
        }),
        'once_store_requests',
      ),
    );
  } else if (key.book === 'person') {
    await tx.query({
      ...statements.storePerson,
      values: [key.userId, key.key, key.fingerprint, record, new Date(now), new Date(now + RETENTION_MS)],
    });
  } else {
    await tx.query({ ...statements.storeConfirmation, values: [key.tokenId, key.apiKeyId, key.tool, key.argumentsHash, record, new Date(now)] });
  }
}

const SAVEPOINT = 'record_once_work';

/**
 * Runs `work` in one transaction and answers its outcome, kept under `key` in that transaction:
 * a success with what it wrote, a kept refusal (`keeps` says which) with none of the refused
 * work. A repeat of a kept key answers the kept outcome with `replayed: true` and runs nothing.
 */
export async function recordOnce<T>(pool: Db, opts: RecordOnceOptions, work: (tx: Db) => Promise<T>): Promise<Kept<T>> {
  const { key, now } = opts;
  // Without a key nothing is kept: a refusal is thrown and its transaction rolls back.
  if (!key) return { ok: true, value: await withTransaction(pool, work), replayed: false };
  if (key.book === 'confirmation' && key.expiresAt <= now) {
    // A used token still answers its result once expired; an unused one spends nothing.
    const found = await findKept<T>(pool, key, now);
    if (found) return found;
    throw refusedConfirmation(`it expired at ${isoSeconds(key.expiresAt)} (quotes are valid for 10 minutes)`);
  }
  return withTransaction(pool, async (tx) => {
    if (key.book === 'request') {
      const { rows } = await tx.query<{ ok: boolean }>({ ...statements.tryLockRequests, values: [[key.apiKeyId], [lockText(key)]] });
      if (!rows[0]!.ok) throw inProgress();
    } else {
      await tx.query({ ...statements.lock, values: [lockSpace(key), lockText(key)] });
    }
    const found = await findKept<T>(tx, key, now);
    if (found) return found;
    const undoable = !opts.refusesBeforeWriting;
    if (undoable) await tx.query(`SAVEPOINT ${SAVEPOINT}`);
    let outcome: Outcome<T>;
    try {
      outcome = { ok: true, value: await work(tx) };
    } catch (error) {
      if (!(error instanceof DomainError && opts.keeps?.(error))) throw error;
      // A kept refusal is recorded in this transaction, under the key's lock, so no retry can
      // run between the refusal and its record; what the work wrote before refusing is undone.
      if (undoable) await tx.query(`ROLLBACK TO SAVEPOINT ${SAVEPOINT}`);
      outcome = { ok: false, error };
    }
    await store(tx, key, recordOf(outcome, requestIdOf(key)), now);
    return { ...outcome, replayed: false, requestId: requestIdOf(key) };
  });
}

/** Where an action's outcome is kept (none: nowhere, it just runs) and which refusals are kept with it. */
export interface OnceOptions {
  once: OnceKey | undefined;
  keeps?: ((error: DomainError) => boolean) | undefined;
}

/**
 * One action as an adapter calls it: its own transaction at the clock's time, kept once under
 * `options.once` (`recordOnce`).
 */
export function runOnce<T>(deps: { pool: Db; clock: Clock }, options: OnceOptions, work: (tx: Db, now: number) => Promise<T>): Promise<Kept<T>> {
  const now = deps.clock.now();
  return recordOnce(deps.pool, { key: options.once, now, keeps: options.keeps }, (tx) => work(tx, now));
}

export type RequestKey = Extract<OnceKey, { book: 'request' }>;

/** One item of `recordEach`: its key and which of its refusals are kept. */
export interface EachItem {
  key: RequestKey;
  keeps?: ((error: DomainError) => boolean) | undefined;
}

/** An item's own result: its outcome, or the error it alone gets (key in use, key reused, a refusal not kept). */
export type EachResult<T> = { ok: true; value: Kept<T> } | { ok: false; error: unknown };

/**
 * The claims of a group's keys, handed to its work so that the work's first statement claims them
 * too, instead of a statement of their own before it: one round trip a group fewer. A work that
 * takes them adds `claimsWith(claims.values())` (the WITH query `claimed`) to its first statement, joins
 * `claimed` on each item's place (`n`, from 1) and hands the rows' claim columns, in the items'
 * order, to `admit`; one that does not calls `admit()` with nothing, which claims them in a
 * statement of its own. Either way the work goes on only with the items `admit` answers.
 */
export interface ClaimsInRead {
  values(): ClaimValues;
  admit(rows?: ClaimRow[]): Promise<number[]>;
}

/** An item's claim as `claimsWith` gives it. */
export interface ClaimRow {
  claim_ok: boolean | null;
  claim_fingerprint: string | null;
  claim_outcome: string | null;
  claim_admitted: boolean | null;
}

/** The values of `claimsWith` for a statement that claims nothing (no row in `claimed`). */
export const noClaims = (): ClaimValues => ({ apiKeyIds: [], keys: [], at: param(null) });

/**
 * The records of a group's outcomes, handed to its work so that the work's last statements store
 * them and end the transaction, instead of statements of their own after it: with the claims in
 * the work's first statement, a group makes two round trips (BEGIN with the work's claims and
 * reads; its write with the records, and COMMIT). A work that takes them adds
 * `recordsWith(records.values(outcomes))` (the WITH query `records_written`; `outcomes`: its
 * answer, the outcomes it will return) to its last write, and
 * sends that write through `commitWith`, the last thing it does, or through `send` (`recordEach`
 * then commits after the work). One that writes nothing, or does not call `values`, leaves them
 * to `recordEach`, which stores them in one statement before COMMIT.
 */
export interface RecordsInWrite<T> {
  values(outcomes: Array<Outcome<T>>): RecordValues;
  commitWith(tx: Db, statements: Statement[]): Promise<Array<pg.QueryResult>>;
  send(tx: Db, statements: Statement[]): Promise<Array<pg.QueryResult>>;
}

/**
 * `RecordsInWrite`'s part of a statement of WITH queries: the records' INSERT, as
 * `records_written`. A key that holds a live record fails it.
 */
export const recordsWith = (v: RecordValues) => sql`records_written AS (${eachInsert(v)})`;

/** The values of `recordsWith` for a statement that stores no records. */
export const noRecords = (): RecordValues => ({ apiKeyIds: [], keys: [], fingerprints: [], outcomes: [], createdAt: null, expiresAt: null });

const isKept = (outcome: Outcome<unknown>, item: EachItem) => outcome.ok || item.keeps?.(outcome.error) === true;

/** A record read for an item: the answer it gets, as a replay or a reused key. */
function answerOf<T>(record: { fingerprint: string; outcome: string }, key: RequestKey): EachResult<T> {
  if (record.fingerprint !== key.fingerprint) return { ok: false, error: reusedKey() };
  return { ok: true, value: keptOf<T>(record.outcome) };
}

/**
 * Thrown for a group whose record could not be written (its key holds a live one the claim's
 * snapshot missed): a plain error, so the whole group rolls back, what its work wrote too, and
 * its items run again each alone (`GroupCommit`), where the lookup after the lock replays it.
 */
const recordMissed = () => new Error('a key of the group holds a record its claim did not see: the group runs again, each item alone');
const isRecordMissed = (err: unknown) => pgErrorCode(err) === '23505' && constraintOf(err) === 'idempotency_records_key_pk';

/**
 * `recordOnce` for several REST requests in one transaction: their keys are claimed and looked up
 * by the work's first statement (`ClaimsInRead`), the work goes on with those neither replayed nor
 * refused, and every record is written by the work's last statement (`RecordsInWrite`) or in one
 * statement after it, before COMMIT. Each item gets the outcome it would get alone. The work
 * answers each admitted item's outcome, in `admit`'s order; it must refuse only before its first
 * write (nothing is undone for one item), a refusal must leave the other items' outcomes as they
 * would be without that item, and anything it throws fails every item.
 *
 * The lookup shares the claim's snapshot, taken before the claims, so a record the key's last
 * holder committed just before our claim can be missed: the item is then admitted although its
 * outcome is kept. Two checks make that harmless. A record we store for such a key is a plain
 * INSERT, which the live one fails, and the whole group with it (`recordMissed`), before COMMIT
 * can take effect. An item whose refusal is not kept stores nothing, so its key is looked up again
 * after the claims, in a statement of its own sent with the records (its snapshot is taken after
 * the claim), and a record found there is its answer.
 */
export async function recordEach<T>(
  pool: Db,
  items: EachItem[],
  now: number,
  work: (tx: Db, claims: ClaimsInRead, records: RecordsInWrite<T>) => Promise<Array<Outcome<T>>>,
  /** How long the transaction may wait for any one lock (none: the statement timeout). */
  lockTimeoutMs?: number,
): Promise<Array<EachResult<T>>> {
  const apiKeyIds = items.map((i) => i.key.apiKeyId);
  const keys = items.map((i) => i.key.key);
  // The group's statements take arrays whose length changes with the group, so PostgreSQL would
  // keep planning them anew (custom plans): for the placement's statements that was most of
  // their database time. Their generic plans, made once per connection, are as good.
  const settings = { lockTimeoutMs, genericPlans: true };
  const group = async (tx: Db) => {
    const results: Array<EachResult<T>> = [];
    let admitted: number[] | undefined;
    const claims: ClaimsInRead = {
      values: () => ({ apiKeyIds, keys, at: param(new Date(now)) }),
      admit: async (rows) => {
        if (admitted) throw new Error('the items were claimed twice');
        const claimed =
          rows ??
          (await tx.query<ClaimRow>(statement(sql`WITH ${claimsWith(claims.values())}\nSELECT claim_ok, claim_fingerprint, claim_outcome, claim_admitted FROM claimed ORDER BY n`, 'once_claim_requests'))).rows;
        if (claimed.length !== items.length) throw new Error('the claims answered another number of rows than there are items');
        admitted = [];
        items.forEach((item, i) => {
          const c = claimed[i]!;
          if (c.claim_admitted) admitted!.push(i);
          else if (!c.claim_ok) results[i] = { ok: false, error: inProgress() };
          else results[i] = answerOf<T>({ fingerprint: c.claim_fingerprint!, outcome: c.claim_outcome! }, item.key);
        });
        return admitted;
      },
    };
    // The records of the admitted items' kept outcomes (given in `admitted`'s order), as the
    // values of their INSERT: each outcome written as JSON once per group, here.
    const recordValues = (admitted: number[], outcomes: Array<Outcome<T>>) => {
      const kept = admitted.flatMap((i, k) => (isKept(outcomes[k]!, items[i]!) ? [{ i, record: recordOf(outcomes[k]!, items[i]!.key.requestId) }] : []));
      const values: RecordValues = {
        apiKeyIds: kept.map(({ i }) => apiKeyIds[i]!),
        keys: kept.map(({ i }) => keys[i]!),
        fingerprints: kept.map(({ i }) => items[i]!.key.fingerprint),
        outcomes: kept.map(({ record }) => record),
        createdAt: new Date(now),
        expiresAt: new Date(now + RETENTION_MS),
      };
      return { count: kept.length, values };
    };
    // The admitted items whose refusals are not kept.
    const unkeptOf = (admitted: number[], outcomes: Array<Outcome<T>>) => admitted.filter((i, k) => !isKept(outcomes[k]!, items[i]!));
    // Looks the unkept items' keys up again, now that the claims are held: a record missed by
    // the claim's snapshot is the answer these would have had.
    const findUnkept = (unkept: number[]): Statement => ({
      ...statements.findRequests,
      values: [unkept.map((i) => apiKeyIds[i]), unkept.map((i) => keys[i]), new Date(now)],
    });
    let found: Array<{ n: number; fingerprint: string; outcome: string }> = [];
    // The outcomes whose records the work's own statement writes, if it does; whether it sent
    // that statement, and whether the statement ended the transaction (nothing may follow it).
    let taken: Array<Outcome<T>> | undefined;
    let sent = false;
    let committed = false;
    const records: RecordsInWrite<T> = {
      values: (outcomes) => {
        if (!admitted) throw new Error('the records of items not yet claimed');
        if (taken) throw new Error('the records were taken twice');
        if (outcomes.length !== admitted.length) throw new Error('the work answered another number of outcomes than it admitted items');
        taken = [...outcomes];
        return recordValues(admitted, outcomes).values;
      },
      commitWith: async (tx, statements) => {
        if (!admitted || !taken || sent) throw new Error('the records were not taken, or sent already');
        const unkept = unkeptOf(admitted, taken);
        sent = true;
        committed = true;
        const answers = await commitWith(tx, unkept.length ? [...statements, findUnkept(unkept)] : statements);
        if (unkept.length) found = answers.pop()!.rows;
        return answers;
      },
      send: async (tx, statements) => {
        if (!taken || sent) throw new Error('the records were not taken, or sent already');
        sent = true;
        const answers = [];
        for (const statement of statements) answers.push(await tx.query(statement));
        return answers;
      },
    };
    const outcomes = await work(tx, claims, records);
    if (!admitted) throw new Error('the work did not claim its items');
    if (outcomes.length !== admitted.length) throw new Error('the work answered another number of outcomes than it admitted items');
    const unkept = unkeptOf(admitted, outcomes);
    if (taken) {
      // The records it wrote must be those of the outcomes it answers. After `commitWith` this
      // can only fail the group, whose items then run alone and replay what was committed.
      if (!sent) throw new Error('the work took the records but did not send them');
      if (!(taken.length === outcomes.length && taken.every((o, k) => o === outcomes[k]))) {
        throw new Error('the work wrote the records of other outcomes than it answers');
      }
    } else {
      const { count, values } = recordValues(admitted, outcomes);
      if (count) await tx.query(statement(eachInsert(values), 'once_store_each'));
    }
    if (unkept.length && !committed) found = (await tx.query<{ n: number; fingerprint: string; outcome: string }>(findUnkept(unkept))).rows;
    admitted.forEach((i, k) => {
      const outcome = outcomes[k]!;
      if (!outcome.ok && !isKept(outcome, items[i]!)) results[i] = { ok: false, error: outcome.error };
      else results[i] = { ok: true, value: { ...outcome, replayed: false, requestId: items[i]!.key.requestId } };
    });
    for (const r of found) {
      const i = unkept[r.n - 1]!;
      results[i] = answerOf<T>(r, items[i]!.key);
    }
    return results;
  };
  try {
    return await withTransaction(pool, group, settings);
  } catch (err) {
    throw isRecordMissed(err) ? recordMissed() : err;
  }
}
