import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import pg from 'pg';

/**
 * The one database handle every data call takes: the pool (each statement on any free
 * connection) or one connection inside a transaction (`withTransaction`). Both run `query`; a
 * function that must hold locks says so by the name of its parameter, `tx`, and is called inside
 * `withTransaction`.
 */
export type Db = pg.Pool | pg.PoolClient;

const inTransaction = (db: Db): db is pg.PoolClient => !(db instanceof pg.Pool);

/**
 * Settings a transaction takes from its start, for its own statements only (SET LOCAL). A call
 * that joins its caller's transaction takes that transaction's settings as they are.
 */
export interface TransactionSettings {
  /** How long any one lock may be waited for, in whole milliseconds (0: no limit; unset: the statement timeout). */
  lockTimeoutMs?: number;
  /**
   * Every statement planned with its generic plan, made once per connection, instead of planned
   * anew for each call's values (PostgreSQL's `plan_cache_mode`).
   */
  genericPlans?: boolean;
}

/**
 * BEGIN with the settings, as one message of fixed text (no values: a number is formatted by
 * us), so the settings cost no round trip of their own.
 */
function beginText(settings: TransactionSettings | undefined): string {
  const parts = ['BEGIN'];
  const ms = settings?.lockTimeoutMs;
  if (ms !== undefined) {
    // PostgreSQL takes a lock_timeout in milliseconds up to 2^31 - 1.
    if (!Number.isInteger(ms) || ms < 0 || ms > 2_147_483_647) throw new Error(`lockTimeoutMs must be a whole number of milliseconds, not ${ms}`);
    parts.push(`SET LOCAL lock_timeout = ${ms}`);
  }
  if (settings?.genericPlans) parts.push('SET LOCAL plan_cache_mode = force_generic_plan');
  return parts.join('; ');
}

/**
 * The transactions `withTransaction` opened, by connection: the answer to their BEGIN, how deep
 * calls join them, and whether `commitWith` ended them.
 */
const opened = new WeakMap<pg.PoolClient, { begun: Promise<unknown>; joined: number; committed: boolean }>();

/**
 * Runs `fn` in one transaction on one pooled connection: COMMIT when it returns, ROLLBACK when it
 * throws. Given a transaction's connection, `fn` joins that transaction (the caller commits).
 * Statements inside send their values as bound parameters. No network calls or waits belong
 * inside `fn`; side effects go after it returns.
 *
 * The pool's connections pipeline (`createDatabase`): BEGIN is sent without waiting for its
 * answer, so it travels with `fn`'s first statement and costs no round trip of its own.
 * PostgreSQL answers in order, so that statement runs inside the transaction; BEGIN's answer is
 * read before COMMIT is sent (by `commitWith` too).
 */
export async function withTransaction<T>(db: Db, fn: (tx: Db) => Promise<T>, settings?: TransactionSettings): Promise<T> {
  if (inTransaction(db)) {
    const state = opened.get(db);
    if (state) state.joined++;
    try {
      return await fn(db);
    } finally {
      if (state) state.joined--;
    }
  }
  // Checked before a connection is taken: a bad setting must not leave one checked out.
  const begin = beginText(settings);
  const client = await db.connect();
  const begun = client.query(begin);
  // Read below; until then a failure here must not count as unhandled.
  begun.catch(() => {});
  const state = { begun, joined: 0, committed: false };
  opened.set(client, state);
  let broken = false;
  try {
    const result = await fn(client);
    await begun;
    if (!state.committed) await client.query('COMMIT');
    return result;
  } catch (err) {
    // After `commitWith` there is no transaction left: PostgreSQL only warns.
    await client.query('ROLLBACK').catch(() => {
      broken = true;
    });
    throw err;
  } finally {
    opened.delete(client);
    // A connection that could not roll back is discarded rather than reused.
    client.release(broken);
  }
}

/** A statement as `query` takes it: named ones are prepared once per connection. */
export interface Statement {
  name?: string;
  text: string;
  values?: unknown[];
}

/**
 * Ends the transaction `withTransaction` opened for `fn` with its last statements: they and
 * COMMIT are sent together, one round trip, and their results answered in order. A statement
 * PostgreSQL refuses makes it skip the rest and answer COMMIT by rolling back; its error is
 * thrown. Only `fn` itself may call it (not a function that joined the transaction), once, as
 * the last thing it sends: anything after it would run outside the transaction.
 */
export async function commitWith(tx: Db, statements: Statement[]): Promise<Array<pg.QueryResult>> {
  const state = inTransaction(tx) ? opened.get(tx) : undefined;
  if (!state || state.joined > 0 || state.committed) {
    throw new Error('commitWith ends a transaction that withTransaction opened, once, from the function it runs');
  }
  state.committed = true;
  // Answered already when a statement of `fn` was: then this costs no wait.
  await state.begun;
  let refused: unknown;
  const sent = statements.map((s) => tx.query(s));
  for (const p of sent) p.catch((err: unknown) => (refused ??= err));
  // The driver reports a statement it could not send (a prepared statement's name reused with
  // other text, a connection no longer queryable) on a later tick, and PostgreSQL would then
  // commit the others: COMMIT goes once every statement was sent. Waiting for the event loop's
  // next turn lets those reports, and the promise callbacks they set off (`refused`), run first;
  // waiting for the next tick alone does not (bench/RESULTS.md). The statements meanwhile run on
  // the server, so COMMIT still arrives in the same round trip.
  await new Promise((resolve) => setImmediate(resolve));
  if (refused !== undefined) throw refused;
  const commit = tx.query('COMMIT');
  commit.catch(() => {});
  // The first failure is the one thrown.
  const results = await Promise.all(sent);
  // A transaction that failed earlier without a throw answers COMMIT with ROLLBACK.
  if ((await commit).command !== 'COMMIT') throw new Error('the transaction was rolled back instead of committed');
  return results;
}

/**
 * Drizzle's query builder on a handle, for statements the schema should type (off the hot paths:
 * building it costs a few objects per call).
 */
export const orm = (db: Db): NodePgDatabase => drizzle({ client: db });
