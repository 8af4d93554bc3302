import type pg from 'pg';
import { readAppSecret } from '../db/app-secrets.js';
import { MCP_SECRET_NAME } from '../db/migrate.js';
import type { Clock } from '../domain/clock.js';
import { type Confirmations, createConfirmations } from './confirmation.js';

/**
 * The confirmation tokens' signer, under `configured` (MCP_CONFIRMATION_SECRET) or else the secret
 * generated into app_secrets at migration. Read once, on first use (so starting the app needs no
 * query); every process reads the same row, so any process confirms any quote. A failed read is
 * retried on the next use.
 */
export function lazyConfirmations(configured: string | undefined, pool: pg.Pool, clock: Clock): () => Promise<Confirmations> {
  let confirmations: Promise<Confirmations> | undefined;
  const read = async () => {
    const secret = configured || (await readAppSecret(pool, MCP_SECRET_NAME));
    if (!secret) throw new Error(`No ${MCP_SECRET_NAME} in app_secrets: run the migrations (npm start does) or set MCP_CONFIRMATION_SECRET.`);
    return createConfirmations(secret, clock);
  };
  return () => {
    confirmations ??= read().catch((err: unknown) => {
      confirmations = undefined;
      throw err;
    });
    return confirmations;
  };
}
