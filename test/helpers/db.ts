import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import { withDatabase } from './urls.js';

export interface TestDatabase extends Database {
  url: string;
  name: string;
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
  const name = `mkt_test_${randomBytes(6).toString('hex')}`;
  const template = inject('templateDatabase');
  for (let attempt = 0; ; attempt++) {
    try {
      await admin((c) => c.query(`CREATE DATABASE ${name} TEMPLATE ${template}`));
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
    drop: async () => {
      await database.close().catch(() => {});
      await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).catch(() => {});
    },
  };
}
