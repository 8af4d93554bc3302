import type { Db } from '../db/handle.js';

/** A secret generated into `app_secrets` at migration (shared by every process), if it exists. */
export async function readAppSecret(pool: Db, name: string): Promise<string | undefined> {
  const { rows } = await pool.query<{ value: string }>('SELECT value FROM app_secrets WHERE name = $1', [name]);
  return rows[0]?.value;
}
