import type { Db } from '../db/handle.js';

/** A secret generated into `app_secrets` at migration (shared by every process), if it exists. */
export async function readAppSecret(pool: Db, name: string): Promise<string | undefined> {
  const { rows } = await pool.query<{ value: string }>('SELECT value FROM app_secrets WHERE name = $1', [name]);
  return rows[0]?.value;
}

/**
 * The secret `name` from `app_secrets`, made with `make` and stored by the first process that
 * needs it; a process that lost the race reads the winner's, so every process holds the same one.
 */
export async function ensureAppSecret(pool: Db, name: string, make: () => string): Promise<string> {
  const found = await readAppSecret(pool, name);
  if (found) return found;
  await pool.query('INSERT INTO app_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [name, make()]);
  const stored = await readAppSecret(pool, name);
  if (!stored) throw new Error(`app_secrets has no ${name} after storing it`);
  return stored;
}
