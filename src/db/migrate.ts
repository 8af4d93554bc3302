import { randomBytes } from 'node:crypto';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { migrationsFolder } from '../paths.js';

// Any constant shared by every process; pg_advisory_lock serialises migrate + seed so several
// processes may start together on an empty database.
const MIGRATION_LOCK = 72_616_001;

export const MCP_SECRET_NAME = 'mcp_confirmation_secret';
/** The key that signs the one-click unsubscribe links of notification mails (docs/mail.md). */
export const UNSUBSCRIBE_SECRET_NAME = 'unsubscribe_key';

/**
 * Applies pending migrations and makes sure the shared secrets exist, then runs `afterMigrate`
 * (the demo seed) while still holding the lock. The lock and the migrations use a connection of
 * their own, outside the pool, so the seed has the whole pool even when it holds one connection.
 */
export async function prepareDatabase<T>(
  pool: pg.Pool,
  afterMigrate?: () => Promise<T>,
): Promise<T | undefined> {
  // The pool's settings, without its pipelining: one statement at a time here, and end() then
  // closes the connection at once instead of waiting for answers in flight.
  const client = new pg.Client({ ...pool.options, pipeline: false });
  await client.connect();
  // A connection lost while the seed runs must fail the start, not crash the process.
  client.on('error', () => {});
  try {
    // A migration may rewrite a large table (a generated column over 1,000,000 outlets takes
    // minutes): the request-sized statement timeout of the pool's settings does not apply here.
    await client.query('SET statement_timeout = 0');
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await migrate(drizzle(client), { migrationsFolder });
      await client.query(
        'INSERT INTO app_secrets (name, value) VALUES ($1, $2), ($3, $4) ON CONFLICT (name) DO NOTHING',
        [MCP_SECRET_NAME, randomBytes(32).toString('base64url'), UNSUBSCRIBE_SECRET_NAME, randomBytes(32).toString('base64url')],
      );
      return afterMigrate ? await afterMigrate() : undefined;
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    await client.end().catch(() => {});
  }
}

/** Applies migrations only (tests' template database, the CLI). */
export async function migrateOnly(pool: pg.Pool): Promise<void> {
  await prepareDatabase(pool);
}
