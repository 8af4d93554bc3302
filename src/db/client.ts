import pg from 'pg';

export interface Database {
  pool: pg.Pool;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  url: string;
  max?: number;
  connectTimeoutMs?: number;
  statementTimeoutMs?: number;
  onError?: (err: Error) => void;
}

// bigint columns (balances, ledger amounts) fit easily in a double below 2^53 cents.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export function createDatabase(opts: DatabaseOptions): Database {
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.max ?? 10,
    // A request waiting for a connection fails after this, which is how a stopped database
    // becomes a prompt 503 instead of a hanging socket.
    connectionTimeoutMillis: opts.connectTimeoutMs ?? 2000,
    idleTimeoutMillis: 30_000,
    statement_timeout: opts.statementTimeoutMs ?? 15_000,
    // Short OLTP queries under concurrency: parallel workers would compete with other requests for
    // the same cores, and tempt the planner into parallel sequential scans of whole tables. Random
    // reads cost about what sequential ones do on SSDs (the default of 4 assumes spinning disks).
    options: '-c max_parallel_workers_per_gather=0 -c random_page_cost=1.1',
    application_name: 'marketplace-api',
    // Each statement is sent without waiting for the answer to the one before (PostgreSQL answers
    // in order). Code that awaits each statement behaves as without; `withTransaction` and
    // `commitWith` send BEGIN and COMMIT with the statements next to them, saving a round trip each.
    pipeline: true,
  });
  // An idle client losing its connection (database restart) must not crash the process.
  pool.on('error', (err) => opts.onError?.(err));
  // Nor may a checked-out one (pool.connect(), a transaction between two statements): pg-pool
  // listens only while a client is idle, and an 'error' event without a listener is thrown. The
  // error still reaches the client's query (or the next one: the client is no longer queryable),
  // which answers 503, and a client that failed is discarded when released.
  pool.on('connect', (client) => void client.on('error', () => {}));
  return {
    pool,
    close: () => pool.end(),
  };
}
