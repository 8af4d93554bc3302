import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { setupApp } from '../helpers/app.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { connect, fails, listen, ok } from '../mcp/helpers.js';
import { answerConsent, authorizeUrl, exchange, grantedTokens, mcpCall, personIn, pkcePair, PUBLIC, REDIRECT, register, RESOURCE, startAuthorization } from './helpers.js';

// Every refusal the OAuth side promises (docs/oauth.md), each against the running app.
const h = await setupApp({ PUBLIC_BASE_URL: PUBLIC });
const mcp = new URL('/mcp/oauth', await listen(h));
const TARGET = 'https://buyer.example/';

const hashed = (token: string) => createHash('sha256').update(token).digest('base64url');
/** Rewrites a stored access token's payload, as if the server had minted it so. */
async function alterToken(token: string, change: Record<string, unknown>) {
  const { rowCount } = await h.database.pool.query(`UPDATE oauth_records SET payload = payload || $2::jsonb WHERE model = 'AccessToken' AND id = $1`, [
    hashed(token),
    JSON.stringify(change),
  ]);
  expect(rowCount).toBe(1);
}
const status = async (token: string) => (await mcpCall(h, token, 'get-balance')).statusCode;
/** A workspace's orders, ledger entries and balances: what spending would change. */
async function spent(workspaceId: number) {
  const q = async (sql: string) => (await h.database.pool.query(sql, [workspaceId])).rows;
  const [orders, entries, balances] = await Promise.all([
    q('SELECT count(*)::int AS n FROM orders WHERE workspace_id = $1'),
    q('SELECT count(*)::int AS n FROM ledger_entries e JOIN ledger_accounts a ON a.id = e.account_id WHERE a.workspace_id = $1'),
    q('SELECT kind, balance FROM ledger_accounts WHERE workspace_id = $1 ORDER BY kind'),
  ]);
  return { orders: orders[0].n as number, entries: entries[0].n as number, balances: balances.map((r) => `${r.kind} ${r.balance}`) };
}

describe('refused at the authorization server', () => {
  it('an authorization request without PKCE goes back to the client with invalid_request', async () => {
    const { browser } = await personIn(h);
    const client = await register(h);
    const res = await browser.get(authorizeUrl({ clientId: client.client_id, scope: 'read', challenge: null }));
    expect(res.statusCode).toBe(303);
    const back = new URL(String(res.headers.location));
    expect(back.origin + back.pathname).toBe(REDIRECT);
    expect(back.searchParams.get('error')).toBe('invalid_request');
    expect(back.searchParams.get('error_description')).toMatch(/PKCE/);
    expect(back.searchParams.get('iss')).toBe(`${PUBLIC}/oauth`);
  });

  it('a code with the wrong code_verifier is refused (invalid_grant), and cannot be used after', async () => {
    const g = await grantedTokens(h);
    // grantedTokens used the right verifier: a second exchange of that code fails too (codes are single-use).
    const again = await exchange(h, { grant_type: 'authorization_code', code: g.code, redirect_uri: REDIRECT, client_id: g.client.client_id, code_verifier: g.verifier });
    expect(again.statusCode).toBe(400);
    expect(again.json().error).toBe('invalid_grant');

    const person = await personIn(h);
    const client = await register(h);
    const { challenge } = pkcePair();
    const consent = await startAuthorization(person.browser, { clientId: client.client_id, scope: 'read', challenge });
    const { final } = await answerConsent(person.browser, consent, { decision: 'allow', workspace_id: String(person.workspaceId) });
    const code = final!.searchParams.get('code')!;
    const wrong = await exchange(h, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: pkcePair().verifier });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().error).toBe('invalid_grant');
  });

  it('a redirect URI not registered is refused on the server, never redirected to', async () => {
    const { browser } = await personIn(h);
    const client = await register(h);
    const res = await browser.get(authorizeUrl({ clientId: client.client_id, scope: 'read', challenge: pkcePair().challenge, redirectUri: 'http://127.0.0.1:9999/callback/other' }));
    expect(res.statusCode).toBe(400);
    expect(res.headers.location).toBeUndefined();
    expect(res.body).toContain('redirect_uri');
  });

  it('a request for another resource is refused (invalid_target)', async () => {
    const { browser } = await personIn(h);
    const client = await register(h);
    const res = await browser.get(authorizeUrl({ clientId: client.client_id, scope: 'read', challenge: pkcePair().challenge, resource: 'https://other.example/mcp' }));
    expect(res.statusCode).toBe(303);
    expect(new URL(String(res.headers.location)).searchParams.get('error')).toBe('invalid_target');
  });

  it('consent denied: back to the client with access_denied, and no grant recorded', async () => {
    const person = await personIn(h);
    const client = await register(h);
    const consent = await startAuthorization(person.browser, { clientId: client.client_id, scope: 'read spend', challenge: pkcePair().challenge });
    const { final } = await answerConsent(person.browser, consent, { decision: 'deny' });
    expect(final!.searchParams.get('error')).toBe('access_denied');
    expect(final!.searchParams.get('code')).toBeNull();
    const { rows } = await h.database.pool.query('SELECT count(*)::int AS n FROM api_keys WHERE oauth_client_id = $1', [client.client_id]);
    expect(rows[0].n).toBe(0);
  });
});

let registrations = 0;
/** A registration answered as it is, from an address of its own (registrations are limited per address). */
const registration = (metadata: Record<string, unknown>) =>
  h.app.inject({
    method: 'POST',
    url: '/oauth/reg',
    remoteAddress: `10.6.0.${++registrations}`,
    payload: { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', ...metadata },
  });

describe('refused at registration', () => {
  it.each(['http://evil.example/cb', 'http://127.0.0.1.evil.example/cb', 'https://user:pass@evil.example/cb', 'http://user@127.0.0.1:9999/cb'])(
    'a redirect URI neither https nor http on loopback, or with a user name, is refused (invalid_redirect_uri): %s',
    async (uri) => {
      const res = await registration({ redirect_uris: ['https://app.example/cb', uri] });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toBe('invalid_redirect_uri');
      expect(res.json().error_description).toMatch(/^redirect_uris must/);
    },
  );

  it('https and http on loopback are registered', async () => {
    for (const uri of ['https://app.example/cb', 'http://127.0.0.1:43123/cb', 'http://localhost/cb', 'http://[::1]:8080/cb']) {
      const res = await registration({ redirect_uris: [uri] });
      expect(res.statusCode, `${uri}: ${res.body}`).toBe(201);
      expect(res.json().redirect_uris).toEqual([uri]);
    }
  });

  it('a client stored with such a redirect URI before the rule gets no code there', async () => {
    const { browser } = await personIn(h);
    const client = await register(h);
    const evil = 'http://evil.example/cb';
    await h.database.pool.query(`UPDATE oauth_records SET payload = jsonb_set(payload, '{redirect_uris}', $2::jsonb) WHERE model = 'Client' AND id = $1`, [
      client.client_id,
      JSON.stringify([evil]),
    ]);
    const res = await browser.get(authorizeUrl({ clientId: client.client_id, scope: 'read', challenge: pkcePair().challenge, redirectUri: evil }));
    expect(res.statusCode).toBe(400);
    expect(res.headers.location).toBeUndefined();
  });
});

describe('text PostgreSQL cannot store, anywhere in OAuth input: a 4xx naming the problem, never a 500', () => {
  const form = { 'content-type': 'application/x-www-form-urlencoded' };
  const errorsLogged = (from: number) => h.logs.slice(from).filter((line) => (JSON.parse(line) as { level: number }).level >= 50);

  it.each([
    ['a NUL in client_name', 'invalid_client_metadata', { client_name: 'a\u0000b' }, /^client_name must not contain NUL/],
    ['an unpaired surrogate in client_name', 'invalid_client_metadata', { client_name: '\ud800' }, /^client_name must not contain NUL/],
    ['a NUL in a redirect URI', 'invalid_redirect_uri', { redirect_uris: ['https://app.example/c\u0000b'] }, /^redirect_uris\.0 must not contain NUL/],
  ])('registration with %s: 400 %s', async (_name, error, metadata, description) => {
    const from = h.logs.length;
    const res = await registration(metadata);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ error, error_description: expect.stringMatching(description) });
    expect(errorsLogged(from)).toEqual([]);
  });

  it('a client_id of NUL is an unknown client at the authorization, token and revocation endpoints', async () => {
    const from = h.logs.length;
    const client = await register(h);
    const auth = await h.app.inject({ url: `/oauth/auth?client_id=%00&response_type=code&redirect_uri=${encodeURIComponent(REDIRECT)}` });
    expect(auth.statusCode).toBe(400);
    expect(auth.headers.location).toBeUndefined();
    expect(auth.body).toContain('invalid_client');
    const near = await h.app.inject({ url: `/oauth/auth?client_id=${client.client_id}%00&response_type=code&redirect_uri=${encodeURIComponent(REDIRECT)}` });
    expect(near.statusCode).toBe(400);
    expect(near.body).toContain('invalid_client');
    for (const [url, payload] of [
      ['/oauth/token', 'grant_type=authorization_code&code=a&redirect_uri=x&code_verifier=y&client_id=%00'],
      ['/oauth/token', `grant_type=refresh_token&refresh_token=a%00&client_id=${client.client_id}%00`],
      ['/oauth/token/revocation', 'token=a&client_id=%00'],
    ] as const) {
      const res = await h.app.inject({ method: 'POST', url, headers: form, payload });
      expect(res.statusCode, `${url} ${payload}: ${res.body}`).toBe(401);
      expect(res.json().error).toBe('invalid_client');
    }
    expect(errorsLogged(from)).toEqual([]);
  });

  it('a NUL in an authorization request\'s state goes back to the client as invalid_request', async () => {
    const from = h.logs.length;
    const { browser } = await personIn(h);
    const client = await register(h);
    const url = authorizeUrl({ clientId: client.client_id, scope: 'read', challenge: pkcePair().challenge }).replace('state=st4te', 'state=a%00b');
    const res = await browser.get(url);
    expect(res.statusCode).toBe(303);
    const back = new URL(String(res.headers.location));
    expect(back.origin + back.pathname).toBe(REDIRECT);
    expect(back.searchParams.get('error')).toBe('invalid_request');
    expect(back.searchParams.get('error_description')).toMatch(/^state must not contain NUL/);
    expect(errorsLogged(from)).toEqual([]);
  });
});

describe('refused at /mcp/oauth', () => {
  it('a token for another resource (audience) is refused', async () => {
    const g = await grantedTokens(h, { scope: 'read' });
    expect(await status(g.tokens.access_token)).toBe(200);
    await alterToken(g.tokens.access_token, { aud: 'https://other.example/mcp' });
    expect(await status(g.tokens.access_token)).toBe(401);
  });

  it('an expired token is refused', async () => {
    const g = await grantedTokens(h, { scope: 'read' });
    expect(await status(g.tokens.access_token)).toBe(200);
    await alterToken(g.tokens.access_token, { exp: Math.floor(Date.now() / 1000) - 60 });
    const res = await mcpCall(h, g.tokens.access_token, 'get-balance');
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toContain('error="invalid_token"');
  });

  it('a reused refresh token revokes the grant: the new refresh token and the access token stop working', async () => {
    const g = await grantedTokens(h, { scope: 'read' });
    expect(g.tokens.refresh_token).toBeTruthy();
    expect(await status(g.tokens.access_token)).toBe(200);
    const first = await exchange(h, { grant_type: 'refresh_token', refresh_token: g.tokens.refresh_token!, client_id: g.client.client_id });
    expect(first.statusCode, first.body).toBe(200);
    const rotated = first.json() as { refresh_token: string; access_token: string };
    expect(rotated.refresh_token).not.toBe(g.tokens.refresh_token);
    const reused = await exchange(h, { grant_type: 'refresh_token', refresh_token: g.tokens.refresh_token!, client_id: g.client.client_id });
    expect(reused.statusCode).toBe(400);
    expect(reused.json().error).toBe('invalid_grant');
    const next = await exchange(h, { grant_type: 'refresh_token', refresh_token: rotated.refresh_token, client_id: g.client.client_id });
    expect(next.statusCode).toBe(400);
    h.clock.advance(5_001); // past the resolver's cache
    expect(await status(rotated.access_token)).toBe(401);
    expect(await status(g.tokens.access_token)).toBe(401);
  });

  it('a refresh naming another resource is refused (invalid_target) and uses nothing up, as a wrong scope: the same refresh token then works, and the grant lives', async () => {
    const g = await grantedTokens(h, { scope: 'read' });
    const refresh = (extra: Record<string, string>) => exchange(h, { grant_type: 'refresh_token', refresh_token: g.tokens.refresh_token!, client_id: g.client.client_id, ...extra });
    const scope = await refresh({ scope: 'spend' });
    expect(scope.statusCode).toBe(400);
    expect(scope.json().error).toBe('invalid_scope');
    const resource = await refresh({ resource: 'https://other.example/mcp' });
    expect(resource.statusCode).toBe(400);
    expect(resource.json().error).toBe('invalid_target');
    const both = await h.app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams([['grant_type', 'refresh_token'], ['refresh_token', g.tokens.refresh_token!], ['client_id', g.client.client_id], ['resource', RESOURCE], ['resource', 'https://other.example/mcp']]).toString(),
    });
    expect(both.statusCode).toBe(400);
    expect(both.json().error).toBe('invalid_target');

    const right = await refresh({ resource: RESOURCE });
    expect(right.statusCode, right.body).toBe(200);
    h.clock.advance(5_001); // past the resolver's cache: a revoked grant would show now
    expect(await status(right.json().access_token)).toBe(200);
    const { rows } = await h.database.pool.query('SELECT revoked_at FROM api_keys WHERE oauth_client_id = $1', [g.client.client_id]);
    expect(rows).toEqual([{ revoked_at: null }]);
  });

  it('a read grant cannot spend: the refusal a read-only key gets', async () => {
    const p = await publisherWithOutlet(h.database, [{ publisher_price_cents: 10_000 }]);
    const g = await grantedTokens(h, { scope: 'read spend' }); // asked for spend, the owner did not tick it
    const client = await connect(mcp, g.tokens.access_token);
    const balance = await ok<{ key: { can_place_orders: boolean; prefix: string; name: string } }>(client, 'get-balance');
    expect(balance.key).toMatchObject({ can_place_orders: false, prefix: 'oauth', name: 'Test Agent' });
    const body = await fails(client, 'place-orders', { offer_ids: [p.offers[0]!.id], target_url: TARGET }, 'forbidden');
    expect(body.message).toMatch(/Can place orders/);
  });

  it('a token narrowed to read by a refresh cannot spend, though its grant may: nothing placed, the ledger unchanged; the full token still spends', async () => {
    const p = await publisherWithOutlet(h.database, [{ publisher_price_cents: 10_000 }]);
    const args = { offer_ids: [p.offers[0]!.id], target_url: TARGET };
    const g = await grantedTokens(h, { scope: 'read spend', fields: { can_place_orders: '1' } });
    expect(g.tokens.scope).toBe('read spend');
    const refreshed = await exchange(h, { grant_type: 'refresh_token', refresh_token: g.tokens.refresh_token!, client_id: g.client.client_id, scope: 'read' });
    expect(refreshed.statusCode, refreshed.body).toBe(200);
    const narrowed = refreshed.json() as { access_token: string; scope: string };
    expect(narrowed.scope).toBe('read');

    const before = await spent(g.workspaceId);
    const full = await connect(mcp, g.tokens.access_token);
    const reader = await connect(mcp, narrowed.access_token);
    const balance = await ok<{ key: { can_place_orders: boolean; abilities: string[] } }>(reader, 'get-balance');
    expect(balance.key.can_place_orders).toBe(false);
    expect(balance.key.abilities).not.toContain('place_orders');
    const refused = await fails(reader, 'place-orders', args, 'forbidden');
    expect(refused.message).toMatch(/Can place orders/);
    // Not even the confirmation of a quote the full token asked for.
    const quote = await ok<{ confirmation_token: string }>(full, 'place-orders', args);
    await fails(reader, 'place-orders', { ...args, confirmation_token: quote.confirmation_token }, 'forbidden');
    expect(await spent(g.workspaceId)).toEqual(before);

    const done = await ok<{ stage: string }>(full, 'place-orders', { ...args, confirmation_token: quote.confirmation_token });
    expect(done.stage).toBe('done');
    expect((await spent(g.workspaceId)).orders).toBe(before.orders + 1);
  });

  it('a spend grant beyond its budget is refused with budget_exceeded', async () => {
    const p = await publisherWithOutlet(h.database, [{ publisher_price_cents: 10_000 }]);
    const g = await grantedTokens(h, { scope: 'read spend', fields: { can_place_orders: '1', order_limit_usd: '50' } });
    const client = await connect(mcp, g.tokens.access_token);
    const body = await fails(client, 'place-orders', { offer_ids: [p.offers[0]!.id], target_url: TARGET }, 'budget_exceeded');
    expect(body.budget).toMatchObject({ window: 'order', limit_cents: 5_000 });
  });
});

it('dynamic registration is limited per address: the 11th in a minute is 429 with Retry-After', async () => {
  for (let i = 0; i < 10; i++) await register(h, {}, '10.7.7.7');
  const res = await h.app.inject({ method: 'POST', url: '/oauth/reg', remoteAddress: '10.7.7.7', payload: { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' } });
  expect(res.statusCode).toBe(429);
  expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  expect((await h.app.inject({ method: 'POST', url: '/oauth/reg', remoteAddress: '10.7.7.8', payload: { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' } })).statusCode).toBe(201);
});

it('the registration limit counts every spelling of the path the server answers: the 11th from one address is 429 whatever its case or trailing slash', async () => {
  const from = '10.7.7.9';
  const spellings = ['/oauth/reg', '/oauth/reg/', '/oauth/Reg', '/oauth/REG/', '/OAUTH/reg', '/Oauth/rEg/?x=1', '/%6Fauth/reg'];
  const post = (url: string) => h.app.inject({ method: 'POST', url, remoteAddress: from, payload: { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' } });
  const first = [];
  for (let i = 0; i < 10; i++) first.push((await post(spellings[i % spellings.length]!)).statusCode);
  expect(first).toEqual(Array(10).fill(201));
  for (const url of spellings) {
    const res = await post(url);
    expect(res.statusCode, `${url}: ${res.body}`).toBe(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  }
  // A forged X-Forwarded-For counts for nothing: the address is the one the server judged.
  const forged = await h.app.inject({ method: 'POST', url: '/OAUTH/REG', remoteAddress: from, headers: { 'x-forwarded-for': '10.99.0.1' }, payload: { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' } });
  expect(forged.statusCode).toBe(429);
});

it('however the path to the metadata is spelled, its links are built from PUBLIC_BASE_URL, never from forwarded headers a client wrote', async () => {
  for (const url of ['/oauth/.well-known/openid-configuration', '/OAUTH/.well-known/openid-configuration', '/Oauth/.well-known/openid-configuration/']) {
    const res = await h.app.inject({ url, headers: { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' } });
    expect(res.statusCode, url).toBe(200);
    expect(res.json().registration_endpoint, url).toBe(`${PUBLIC}/oauth/reg`);
    expect(res.json().token_endpoint, url).toBe(`${PUBLIC}/oauth/token`);
  }
});
