import { createHash, timingSafeEqual } from 'node:crypto';
import type { Db } from '../../db/handle.js';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import { unstorableTextPath } from '../text-input.js';

/**
 * Models whose id is itself a secret (a code or token is its id): stored as the id's SHA-256, so
 * the table never holds a usable token. The library always asks by the raw id, hashed here alike.
 */
const SECRET_IDS = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'ClientCredentials',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
  'RegistrationAccessToken',
  'InitialAccessToken',
  'PushedAuthorizationRequest',
]);

/** How a client secret is stored: marked, so a secret stored as sent (before they were hashed) is told apart. */
const HASHED_SECRET = 'sha256:';

const sha256 = (text: string) => createHash('sha256').update(text).digest();
const digest = (secret: string) => `${HASHED_SECRET}${sha256(secret).toString('base64url')}`;

/**
 * A confidential client's secret as it is stored: its SHA-256, never the secret. The server only
 * compares what a client presents (client_secret_basic and _post; client_secret_jwt, which needs
 * the secret itself, is not offered). The library makes secrets of 64 random bytes, so a fast
 * hash is enough: there is nothing to guess.
 */
export function hashClientSecret(secret: string): string {
  return secret.startsWith(HASHED_SECRET) ? secret : digest(secret);
}

/**
 * Whether a presented secret is the client's, in constant time. A secret stored as sent, before
 * secrets were hashed, still compares (the migration that hashes them may run after a process of
 * the earlier version stored one).
 */
export function clientSecretMatches(stored: string | undefined, presented: string): boolean {
  if (typeof stored !== 'string' || typeof presented !== 'string') return false;
  // Always hashed, whatever it looks like: the stored value presented as a secret is no secret.
  return timingSafeEqual(sha256(hashClientSecret(stored)), sha256(digest(presented)));
}

// Expired rows go a batch at a time, every so many writes: no timer, and any process may do it.
const PURGE_EVERY_WRITES = 200;

/**
 * The OAuth server's storage in PostgreSQL (the adapter interface of oidc-provider, one class
 * whose instances serve one model each). Every process shares it, so any process answers any
 * step of a flow another one began.
 */
export function oauthStore(pool: Db): new (name: string) => Adapter {
  let writes = 0;
  return class PgOAuthAdapter implements Adapter {
    constructor(private readonly name: string) {}

    private key(id: string): string {
      return SECRET_IDS.has(this.name) ? createHash('sha256').update(id).digest('base64url') : id;
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      if (this.name === 'Client' && typeof payload.client_secret === 'string') payload = { ...payload, client_secret: hashClientSecret(payload.client_secret) };
      await pool.query(
        `INSERT INTO oauth_records (model, id, payload, grant_id, uid, user_code, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $7::int IS NULL THEN NULL ELSE now() + make_interval(secs => $7::int) END)
         ON CONFLICT (model, id) DO UPDATE SET payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id, uid = EXCLUDED.uid,
                                               user_code = EXCLUDED.user_code, expires_at = EXCLUDED.expires_at`,
        [this.name, this.key(id), payload, payload.grantId ?? null, payload.uid ?? null, payload.userCode ?? null, expiresIn ? Math.ceil(expiresIn) : null],
      );
      if (++writes % PURGE_EVERY_WRITES === 0) {
        await pool.query(
          `DELETE FROM oauth_records WHERE ctid IN (SELECT ctid FROM oauth_records WHERE expires_at < now() - interval '1 hour' LIMIT 1000)`,
        );
      }
    }

    private async one(where: string, value: string): Promise<AdapterPayload | undefined> {
      // A value PostgreSQL cannot hold (a client_id of "%00") was never stored: not found, as
      // the library expects of an unknown id, rather than a query error.
      if (unstorableTextPath(value) !== undefined) return undefined;
      const { rows } = await pool.query<{ payload: AdapterPayload }>(
        `SELECT payload FROM oauth_records WHERE model = $1 AND ${where} = $2 AND (expires_at IS NULL OR expires_at > now()) LIMIT 1`,
        [this.name, value],
      );
      return rows[0]?.payload;
    }

    find(id: string) {
      return this.one('id', this.key(id));
    }

    findByUid(uid: string) {
      return this.one('uid', uid);
    }

    findByUserCode(userCode: string) {
      return this.one('user_code', userCode);
    }

    async consume(id: string): Promise<void> {
      if (unstorableTextPath(this.key(id)) !== undefined) return;
      await pool.query(
        `UPDATE oauth_records SET payload = payload || jsonb_build_object('consumed', floor(extract(epoch FROM now()))::bigint)
          WHERE model = $1 AND id = $2`,
        [this.name, this.key(id)],
      );
    }

    async destroy(id: string): Promise<void> {
      if (unstorableTextPath(this.key(id)) !== undefined) return;
      await pool.query('DELETE FROM oauth_records WHERE model = $1 AND id = $2', [this.name, this.key(id)]);
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      if (unstorableTextPath(grantId) !== undefined) return;
      await pool.query('DELETE FROM oauth_records WHERE model = $1 AND grant_id = $2', [this.name, grantId]);
    }
  };
}

const PURGE_CLIENTS_BATCH = 1000;

/**
 * Deletes clients registered here (dynamic registration, open to anyone) more than `unusedHours`
 * ago that no person ever connected: no consent recorded (no `api_keys` row names the client) and
 * no grant of the OAuth server's. Their registration access tokens go with them. An app that comes
 * back later gets `invalid_client` and registers again, as the MCP authorization specification
 * expects of it. Clients of a metadata document are never stored, so never purged. Answers how
 * many were deleted; any process may run it.
 */
export async function purgeUnusedClients(db: Db, now: number, unusedHours: number): Promise<number> {
  const issuedBefore = Math.floor((now - unusedHours * 3_600_000) / 1000);
  let purged = 0;
  for (;;) {
    const { rows } = await db.query<{ deleted: number }>({
      name: 'oauth_clients_purge_unused',
      text: `WITH unused AS (
               SELECT c.id FROM oauth_records c
                WHERE c.model = 'Client' AND (c.payload->>'client_id_issued_at')::bigint < $1
                  AND NOT EXISTS (SELECT 1 FROM api_keys k WHERE k.oauth_client_id = c.id)
                  AND NOT EXISTS (SELECT 1 FROM oauth_records g WHERE g.model = 'Grant' AND g.payload->>'clientId' = c.id)
                LIMIT ${PURGE_CLIENTS_BATCH}
             ), tokens AS (
               DELETE FROM oauth_records r USING unused u WHERE r.model = 'RegistrationAccessToken' AND r.payload->>'clientId' = u.id
             ), gone AS (
               DELETE FROM oauth_records r USING unused u WHERE r.model = 'Client' AND r.id = u.id RETURNING 1
             )
             SELECT (SELECT count(*) FROM gone)::int AS deleted`,
      values: [issuedBefore],
    });
    purged += rows[0]!.deleted;
    if (rows[0]!.deleted < PURGE_CLIENTS_BATCH) return purged;
  }
}
