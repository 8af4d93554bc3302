import { createHash } from 'node:crypto';
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
