import type pg from 'pg';

export type Tx = pg.PoolClient;

/**
 * Statements that travel with BEGIN and with COMMIT, in the same round trip (PostgreSQL's simple
 * query protocol runs a batch of statements, stopping at the first error). They cannot take
 * parameters: every value in them goes through `sqlLiteral`.
 */
export interface TransactionBatches<T> {
  /** Statements the batches run with EXECUTE, prepared on the connection first when it is new to them. */
  prepared?: PreparedSql[];
  /** Run right after BEGIN; their results are handed to `fn`. */
  afterBegin?: string[];
  /** Run right before COMMIT, built from what `fn` returned. */
  beforeCommit?: (result: T) => string[];
}

/**
 * Runs `fn` in one transaction on one pooled connection: COMMIT when it returns, ROLLBACK when it
 * throws. No network calls or waits belong inside `fn`; side effects go after it returns.
 */
export async function withTransaction<T>(
  pool: pg.Pool,
  fn: (tx: Tx, begun: pg.QueryResult[]) => Promise<T>,
  batches: TransactionBatches<T> = {},
): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    if (batches.prepared) await prepareOn(client, batches.prepared);
    let begun: pg.QueryResult[] = [];
    if (batches.afterBegin?.length) {
      // With more than one statement, pg answers one result per statement, BEGIN's first.
      const results = (await client.query(['BEGIN', ...batches.afterBegin].join(';\n'))) as unknown as pg.QueryResult[];
      begun = results.slice(1);
    } else {
      await client.query('BEGIN');
    }
    const result = await fn(client, begun);
    await client.query([...(batches.beforeCommit?.(result) ?? []), 'COMMIT'].join(';\n'));
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
 * A statement prepared once per connection and run by name from a batch, `EXECUTE name(args)`:
 * a batch cannot bind parameters, and planning the same small statement in every request costs
 * PostgreSQL more than running it.
 */
export interface PreparedSql {
  name: string;
  /** Parameter types, e.g. ['int', 'text']. */
  types: string[];
  /** The statement, with $1… for the parameters. */
  text: string;
}

const preparedOnConnection = new WeakMap<pg.ClientBase, Set<string>>();

async function prepareOn(client: pg.ClientBase, statements: PreparedSql[]): Promise<void> {
  let done = preparedOnConnection.get(client);
  if (!done) preparedOnConnection.set(client, (done = new Set()));
  for (const st of statements) {
    if (done.has(st.name)) continue;
    try {
      await client.query(`PREPARE ${st.name}(${st.types.join(', ')}) AS ${st.text}`);
    } catch (err) {
      // Prepared statements outlive transactions: one left by an earlier, failed attempt will do.
      if ((err as { code?: string }).code !== '42P05') throw err;
    }
    done.add(st.name);
  }
}

/** A value a batch can carry: see `sqlLiteral`. */
export type SqlValue = string | number | Date | null | number[];

/** `EXECUTE name(literals)` for a batch. */
export function executeSql(st: PreparedSql, values: SqlValue[]): string {
  return `EXECUTE ${st.name}(${values.map(sqlLiteral).join(', ')})`;
}

/**
 * A value written into SQL text, for the batches above. Strings are quoted as the driver's
 * escapeLiteral does (quotes doubled; with a backslash, an E'' string with backslashes doubled);
 * numbers must be safe integers, alone or in an array; dates are ISO strings, typed by the prepared
 * statement's parameter.
 */
export function sqlLiteral(value: SqlValue): string {
  if (value === null) return 'NULL';
  // An integer array as an array literal, typed by the prepared statement's parameter (int[]).
  if (Array.isArray(value)) return `'{${value.map((v) => sqlLiteral(v)).join(',')}}'`;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new Error(`not an integer: ${value}`);
    return String(value);
  }
  if (value instanceof Date) return `'${value.toISOString()}'`;
  // What pg.escapeLiteral writes, with native replaces instead of its loop over every character
  // (response bodies run to kilobytes).
  const quoted = value.replaceAll("'", "''");
  return value.includes('\\') ? ` E'${quoted.replaceAll('\\', '\\\\')}'` : `'${quoted}'`;
}

/**
 * A transaction-local switch that a batch sets in one statement and a later statement of the same
 * batch reads, with no round trip between them: a guarded write does nothing unless it is on.
 * The idempotency batch turns it on for a request whose key it holds and has no live record.
 */
export const PROCEED_SETTING = 'app.proceed';
/** The SQL condition a guarded statement adds to its writes. */
export const proceedGuard = `current_setting('${PROCEED_SETTING}', true) = 'true'`;
