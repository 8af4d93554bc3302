import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { Db } from '../../db/handle.js';

const COOKIE_KEYS = 'oauth_cookie_keys';
const SIGNING_KEY = 'oauth_signing_jwk';

export interface OAuthKeys {
  /** Keys that sign the OAuth server's cookies. */
  cookieKeys: string[];
  /** The private JSON Web Key that signs what the server signs (its ID tokens). */
  signingJwk: Record<string, unknown>;
}

async function readSecrets(pool: Db): Promise<Map<string, string>> {
  const { rows } = await pool.query<{ name: string; value: string }>('SELECT name, value FROM app_secrets WHERE name = ANY($1)', [[COOKIE_KEYS, SIGNING_KEY]]);
  return new Map(rows.map((r) => [r.name, r.value]));
}

/**
 * The OAuth server's cookie and signing keys: made by the first process that needs them and
 * stored in app_secrets; a process that lost the race reads the winner's, so all share them.
 */
export async function oauthKeys(pool: Db): Promise<OAuthKeys> {
  let found = await readSecrets(pool);
  if (!found.has(COOKIE_KEYS) || !found.has(SIGNING_KEY)) {
    const cookie = JSON.stringify([randomBytes(32).toString('base64url')]);
    const jwk = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
    const signing = JSON.stringify({ ...jwk, kid: randomBytes(8).toString('base64url'), use: 'sig', alg: 'RS256' });
    await pool.query('INSERT INTO app_secrets (name, value) VALUES ($1, $2), ($3, $4) ON CONFLICT (name) DO NOTHING', [COOKIE_KEYS, cookie, SIGNING_KEY, signing]);
    found = await readSecrets(pool);
  }
  return { cookieKeys: JSON.parse(found.get(COOKIE_KEYS)!) as string[], signingJwk: JSON.parse(found.get(SIGNING_KEY)!) as Record<string, unknown> };
}
