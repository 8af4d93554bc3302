import pg from 'pg';

export type Tx = pg.PoolClient;

/**
 * Statements that travel with BEGIN and with COMMIT, in the same round trip (PostgreSQL's simple
 * query protocol runs a batch of statements, stopping at the first error). They cannot take
 * parameters: every value in them goes through `sqlLiteral`.
 */
export interface TransactionBatches<T> {
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
    const first = batches.afterBegin ?? [];
    // With more than one statement, pg answers one result per statement, BEGIN's first.
    const begun = first.length ? ((await client.query(['BEGIN', ...first].join(';\n'))) as unknown as pg.QueryResult[]).slice(1) : [];
    if (!first.length) await client.query('BEGIN');
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
 * A value written into SQL text, for the batches above. Strings are quoted by the driver's own
 * escaping (quotes doubled, backslashes in an E'' string); numbers must be safe integers.
 */
export function sqlLiteral(value: string | number | Date | null): string {
  if (value === null) return 'NULL';
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new Error(`not an integer: ${value}`);
    return String(value);
  }
  if (value instanceof Date) return `${pg.escapeLiteral(value.toISOString())}::timestamptz`;
  return pg.escapeLiteral(value);
}
