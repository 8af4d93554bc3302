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
 * Runs `fn` in one transaction on one pooled connection: COMMIT when it returns, ROLLBACK when it
 * throws. Given a transaction's connection, `fn` joins that transaction (the caller commits).
 * Statements inside send their values as bound parameters. No network calls or waits belong
 * inside `fn`; side effects go after it returns.
 */
export async function withTransaction<T>(db: Db, fn: (tx: Db) => Promise<T>, settings?: TransactionSettings): Promise<T> {
  if (inTransaction(db)) return fn(db);
  const client = await db.connect();
  let broken = false;
  try {
    await client.query(beginText(settings));
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {
      broken = true;
    });
    throw err;
  } finally {
    // A connection that could not roll back is discarded rather than reused.
    client.release(broken);
  }
}

/**
 * Drizzle's query builder on a handle, for statements the schema should type (off the hot paths:
 * building it costs a few objects per call).
 */
export const orm = (db: Db): NodePgDatabase => drizzle({ client: db });
