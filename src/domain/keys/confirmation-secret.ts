import type { Db } from '../../db/handle.js';
import { readAppSecret } from '../../db/app-secrets.js';
import { MCP_SECRET_NAME } from '../../db/migrate.js';

/**
 * The secret that signs MCP confirmation tokens: `configured` (MCP_CONFIRMATION_SECRET) or else
 * the one generated into app_secrets at migration, which every process reads alike, so any
 * process confirms any quote.
 */
export async function confirmationSecret(pool: Db, configured: string | undefined): Promise<string> {
  const secret = configured || (await readAppSecret(pool, MCP_SECRET_NAME));
  if (!secret) throw new Error(`No ${MCP_SECRET_NAME} in app_secrets: run the migrations (npm start does) or set MCP_CONFIRMATION_SECRET.`);
  return secret;
}
