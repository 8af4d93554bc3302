import type pg from 'pg';
import type { Clock } from '../domain/clock.js';
import { confirmationSecret } from '../domain/keys/confirmation-secret.js';
import { type Confirmations, createConfirmations } from './confirmation.js';

/**
 * The confirmation tokens' signer. Its secret is read once, on first use (so starting the app
 * needs no query); a failed read is retried on the next use.
 */
export function lazyConfirmations(configured: string | undefined, pool: pg.Pool, clock: Clock): () => Promise<Confirmations> {
  let confirmations: Promise<Confirmations> | undefined;
  const read = async () => createConfirmations(await confirmationSecret(pool, configured), clock);
  return () => {
    confirmations ??= read().catch((err: unknown) => {
      confirmations = undefined;
      throw err;
    });
    return confirmations;
  };
}
