import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import { withDatabase } from './urls.js';

/** The comment on a test database its file no longer uses (global-setup.ts drops it). */
export const DONE = 'mkt test database: done';

export interface TestDatabase extends Database {
  url: string;
  name: string;
  /** Closes the pool; the database itself is dropped when the run ends (the global setup's teardown). */
  drop(): Promise<void>;
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: inject('pgAdminUrl') });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** A fresh database cloned from the migrated template; private to the calling test file. */
export async function createTestDatabase(opts: { max?: number; connectTimeoutMs?: number } = {}): Promise<TestDatabase> {
  const name = `${inject('testDatabasePrefix')}${randomBytes(6).toString('hex')}`;
  const template = inject('templateDatabase');
  for (let attempt = 0; ; attempt++) {
    try {
      await admin(async (c) => {
        await c.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
        // What the embedded and container servers of the suite start with (pg-server.ts), for this
        // database only on a server named by TEST_DATABASE_URL: a commit does not wait for its WAL
        // to reach the disk. What a transaction sees and what it commits are the same; only a
        // crash of the machine could lose the last commits, which no test needs to survive.
        await c.query(`ALTER DATABASE ${name} SET synchronous_commit = off`);
      });
      break;
    } catch (err) {
      // Two clones starting at the same instant can see each other as "using" the template.
      if ((err as { code?: string }).code !== '55006' || attempt > 20) throw err;
      await new Promise((r) => setTimeout(r, 50 + Math.random() * 100));
    }
  }
  const url = withDatabase(inject('pgAdminUrl'), name);
  const database = createDatabase({ url, max: opts.max ?? 10, connectTimeoutMs: opts.connectTimeoutMs ?? 5000 });
  return {
    ...database,
    url,
    name,
    // Not dropped here: PostgreSQL (15, at least) runs an immediate checkpoint for every DROP
    // DATABASE and waits for it (writing every dirty page of every database on the server), so
    // dropping at the end of each file made each file wait for one and the others write more WAL.
    // Marked done instead: the global setup drops the marked ones several at a time, off the
    // files' way, and the rest when the run ends.
    drop: async () => {
      await database.close().catch(() => {});
      await admin((c) => c.query(`COMMENT ON DATABASE ${name} IS '${DONE}'`)).catch(() => {});
    },
  };
}
