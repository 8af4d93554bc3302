import { randomBytes } from 'node:crypto';
import { ensureAppSecret } from '../../db/app-secrets.js';
import type { Db } from '../../db/handle.js';

const CSRF_KEY_NAME = 'console_csrf_hmac_key';

/**
 * The HMAC key of the console's CSRF tokens, which carry a keyed hash of the session they were
 * made for. Stored in app_secrets, so a token made by one process is good on every other. Read
 * (or first stored) on first use, again after a failed read: starting the app needs no query, so
 * it starts, and answers 503, while the database is away.
 */
export function consoleCsrfKey(pool: Db): () => Promise<string> {
  let key: Promise<string> | undefined;
  return () =>
    (key ??= ensureAppSecret(pool, CSRF_KEY_NAME, () => randomBytes(32).toString('base64url')).catch((err: unknown) => {
      key = undefined;
      throw err;
    }));
}
