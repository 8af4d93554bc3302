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
 * Runs `fn` in one transaction on one pooled connection: COMMIT when it returns, ROLLBACK when it
 * throws. Given a transaction's connection, `fn` joins that transaction (the caller commits).
 * Statements inside send their values as bound parameters. No network calls or waits belong
 * inside `fn`; side effects go after it returns.
 */
export async function withTransaction<T>(db: Db, fn: (tx: Db) => Promise<T>): Promise<T> {
  if (inTransaction(db)) return fn(db);
  const client = await db.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
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
