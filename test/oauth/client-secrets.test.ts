import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';
import { setupApp } from '../helpers/app.js';
import { answerConsent, exchange, personIn, pkcePair, PUBLIC, REDIRECT, register, startAuthorization } from './helpers.js';

// A confidential client's secret (dynamic registration) is shown once, in the registration's
// answer, and stored only as its SHA-256: the server needs only to compare it.
const h = await setupApp({ PUBLIC_BASE_URL: PUBLIC });

const storedClient = async (clientId: string) =>
  (await h.database.pool.query<{ payload: Record<string, unknown> }>(`SELECT payload FROM oauth_records WHERE model = 'Client' AND id = $1`, [clientId])).rows[0]!.payload;

/** A signed-in owner's consent for the client: the code and its verifier. */
async function codeFor(clientId: string) {
  const person = await personIn(h);
  const { verifier, challenge } = pkcePair();
  const consent = await startAuthorization(person.browser, { clientId, scope: 'read', challenge });
  const { final } = await answerConsent(person.browser, consent, { decision: 'allow', workspace_id: String(person.workspaceId) });
  return { code: final!.searchParams.get('code')!, verifier };
}

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

describe('OAuth client secrets are stored hashed — security', () => {
  it('client_secret_post: the table never holds the secret; the secret authenticates, a wrong one or the stored value does not', async () => {
    const client = await register(h, { token_endpoint_auth_method: 'client_secret_post' });
    const secret = client.client_secret!;
    expect(secret.length).toBeGreaterThanOrEqual(43);
    const stored = await storedClient(client.client_id);
    expect(JSON.stringify(stored)).not.toContain(secret);
    const { rows } = await h.database.pool.query(`SELECT count(*)::int AS n FROM oauth_records WHERE payload::text LIKE '%' || $1 || '%'`, [secret]);
    expect(rows[0].n).toBe(0);

    const { code, verifier } = await codeFor(client.client_id);
    const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: verifier };
    for (const wrong of [`${secret}x`, String(stored.client_secret)]) {
      const refused = await exchange(h, { ...form, client_secret: wrong });
      expect(refused.statusCode).toBe(401);
      expect(refused.json().error).toBe('invalid_client');
    }
    const token = await exchange(h, { ...form, client_secret: secret });
    expect(token.statusCode, token.body).toBe(200);
    const refreshed = await exchange(h, { grant_type: 'refresh_token', refresh_token: token.json().refresh_token, client_id: client.client_id, client_secret: secret });
    expect(refreshed.statusCode, refreshed.body).toBe(200);
  });

  it('client_secret_basic authenticates with the secret too', async () => {
    const client = await register(h, { token_endpoint_auth_method: 'client_secret_basic' });
    expect(JSON.stringify(await storedClient(client.client_id))).not.toContain(client.client_secret!);
    const { code, verifier } = await codeFor(client.client_id);
    const res = await h.app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client.client_id, client.client_secret!) },
      payload: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }).toString(),
    });
    expect(res.statusCode, res.body).toBe(200);
  });

  it('reading the registration back (RFC 7592) does not show the stored hash as the secret', async () => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/oauth/reg',
      remoteAddress: '10.5.5.5',
      payload: { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_post', grant_types: ['authorization_code', 'refresh_token'] },
    });
    expect(res.statusCode, res.body).toBe(201);
    const { registration_client_uri: uri, registration_access_token: rat, client_secret: secret } = res.json();
    const read = await h.app.inject({ url: new URL(uri).pathname, headers: { authorization: `Bearer ${rat}` } });
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json().client_secret).toBeUndefined();
    expect(read.body).not.toContain(secret);
  });

  it('client_secret_jwt is not offered: it needs the secret itself, which is not kept', async () => {
    const metadata = await h.app.inject({ url: '/oauth/.well-known/openid-configuration' });
    expect(metadata.json().token_endpoint_auth_methods_supported).not.toContain('client_secret_jwt');
    const res = await h.app.inject({ method: 'POST', url: '/oauth/reg', remoteAddress: '10.5.5.6', payload: { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_jwt' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('invalid_client_metadata');
  });

  it('a client stored with its secret as sent, before secrets were hashed, is hashed by the migration and keeps working', async () => {
    const client = await register(h, { token_endpoint_auth_method: 'client_secret_post' });
    const secret = client.client_secret!;
    // As the server stored it before.
    await h.database.pool.query(`UPDATE oauth_records SET payload = jsonb_set(payload, '{client_secret}', to_jsonb($2::text)) WHERE model = 'Client' AND id = $1`, [client.client_id, secret]);
    const file = readdirSync(join(projectRoot, 'migrations')).find((f) => f.endsWith('_hash_oauth_client_secrets.sql'))!;
    for (const statement of readFileSync(join(projectRoot, 'migrations', file), 'utf8').split('--> statement-breakpoint')) await h.database.pool.query(statement);
    expect(JSON.stringify(await storedClient(client.client_id))).not.toContain(secret);

    const { code, verifier } = await codeFor(client.client_id);
    const token = await exchange(h, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: verifier, client_secret: secret });
    expect(token.statusCode, token.body).toBe(200);
  });
});
