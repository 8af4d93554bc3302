import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../src/http/plugins/logging.js';
import { setupApp } from '../helpers/app.js';
import { answerConsent, authorizeUrl, exchange, grantedTokens, mcpCall, personIn, pkcePair, PUBLIC, REDIRECT, register, startAuthorization } from './helpers.js';

const h = await setupApp({ PUBLIC_BASE_URL: PUBLIC, LOG_LEVEL: 'trace' });
const noLoopback = await setupApp({ PUBLIC_BASE_URL: PUBLIC, OUTBOUND_ALLOW_LOOPBACK: false });

describe('consent page', () => {
  it('names the client, offers the workspace select, "Can place orders" to owners only, and lets its form go to the redirect origin', async () => {
    const owner = await personIn(h, 'owner');
    const client = await register(h);
    const path = await startAuthorization(owner.browser, { clientId: client.client_id, scope: 'read spend', challenge: pkcePair().challenge });
    const page = await owner.browser.get(path);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<h1>Connect Test Agent</h1>');
    expect(page.body).toContain('registered itself here');
    expect(page.body).toContain('<label for="f-workspace_id">Workspace</label>');
    expect(page.body).toContain('<label for="f-can_place_orders">Can place orders</label>');
    expect(page.body).toMatch(/<button type="submit" name="decision" value="allow">Allow<\/button>/);
    expect(page.body).toMatch(/value="deny"[^>]*>Deny<\/button>/);
    expect(String(page.headers['content-security-policy'])).toContain("form-action 'self' http://127.0.0.1:9999;");

    const member = await personIn(h, 'member');
    const path2 = await startAuthorization(member.browser, { clientId: client.client_id, scope: 'read spend', challenge: pkcePair().challenge });
    const page2 = await member.browser.get(path2);
    expect(page2.body).not.toContain('Can place orders');
    // A member who sends the box anyway gets a read grant at most: the server decides, not the form.
    const refused = await member.browser.post(path2, { decision: 'allow', workspace_id: String(member.workspaceId), can_place_orders: '1' });
    expect(refused.statusCode).toBe(422);
    expect(refused.body).toContain('Only an owner of this workspace may let an app place orders.');
  });

  it('refuses a bad budget, a workspace that is not the person\'s, and a viewer', async () => {
    const owner = await personIn(h, 'owner');
    const other = await personIn(h, 'owner');
    const client = await register(h);
    const path = await startAuthorization(owner.browser, { clientId: client.client_id, scope: 'read spend', challenge: pkcePair().challenge });
    const bad = await owner.browser.post(path, { decision: 'allow', workspace_id: String(owner.workspaceId), can_place_orders: '1', daily_limit_usd: '-5' });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toContain('Limit per day must be empty or an amount of US dollars');
    const foreign = await owner.browser.post(path, { decision: 'allow', workspace_id: String(other.workspaceId) });
    expect(foreign.statusCode).toBe(422);
    expect(foreign.body).toContain('must be one of your workspaces');
    const viewer = await personIn(h, 'viewer');
    const path3 = await startAuthorization(viewer.browser, { clientId: client.client_id, scope: 'read', challenge: pkcePair().challenge });
    const page3 = await viewer.browser.get(path3);
    expect(page3.body).toContain('None of your workspaces lets you connect apps');
    expect(page3.body).not.toContain('>Allow<');
  });

  it('refuses a budget field sent twice, naming it, and grants nothing (it is not read as "no limit")', async () => {
    const owner = await personIn(h, 'owner');
    const client = await register(h);
    const path = await startAuthorization(owner.browser, { clientId: client.client_id, scope: 'read spend', challenge: pkcePair().challenge });
    const fields: [string, string][] = [
      ['decision', 'allow'],
      ['workspace_id', String(owner.workspaceId)],
      ['can_place_orders', '1'],
      ['daily_limit_usd', '50'],
      ['daily_limit_usd', '60'],
    ];
    const twice = await owner.browser.post(path, fields);
    expect(twice.statusCode).toBe(422);
    expect(twice.body).toContain('Limit per day must be sent once, as text');
    const grants = await h.database.pool.query('SELECT 1 FROM api_keys WHERE oauth_client_id = $1', [client.client_id]);
    expect(grants.rowCount).toBe(0);
    // A required field sent twice is told that once, not also that it is missing.
    const workspaceTwice = await owner.browser.post(path, [['decision', 'allow'], ['workspace_id', String(owner.workspaceId)], ['workspace_id', String(owner.workspaceId)]]);
    expect(workspaceTwice.statusCode).toBe(422);
    expect(workspaceTwice.body).toContain('must be sent once, as text');
    expect(workspaceTwice.body).not.toContain('is required');
    // The same request, each field once, is granted with its limit.
    const once = await owner.browser.post(path, fields.slice(0, 4));
    expect(once.statusCode).toBe(303);
    const limits = await h.database.pool.query('SELECT daily_limit_cents FROM api_keys WHERE oauth_client_id = $1', [client.client_id]);
    expect(limits.rows).toEqual([{ daily_limit_cents: 5000 }]);
  });

  it('without a session leads to sign-in and back; a form without its CSRF token is 403', async () => {
    const owner = await personIn(h, 'owner');
    const client = await register(h);
    const path = await startAuthorization(owner.browser, { clientId: client.client_id, scope: 'read', challenge: pkcePair().challenge });
    const anonymous = await h.app.inject({ url: path });
    expect(anonymous.statusCode).toBe(303);
    expect(anonymous.headers.location).toBe(`/app/sign-in?next=${encodeURIComponent(path)}`);
    const forged = await owner.browser.post(path, { decision: 'allow', workspace_id: String(owner.workspaceId) }, { csrf: false });
    expect(forged.statusCode).toBe(403);
  });

  it('is answered once: Allow again, or Deny after Allow, leads on as the first did and records no second grant; two Allows at once record one', async () => {
    const owner = await personIn(h, 'owner');
    const client = await register(h);
    const grants = async () =>
      (await h.database.pool.query<{ id: number; revoked: boolean }>('SELECT id, revoked_at IS NOT NULL AS revoked FROM api_keys WHERE oauth_client_id = $1 ORDER BY id', [client.client_id])).rows;
    const { verifier, challenge } = pkcePair();
    const path = await startAuthorization(owner.browser, { clientId: client.client_id, scope: 'read spend', challenge });
    const allow = (on: string, daily: string) => owner.browser.post(on, { decision: 'allow', workspace_id: String(owner.workspaceId), can_place_orders: '1', daily_limit_usd: daily });
    const first = await allow(path, '1');
    expect(first.statusCode).toBe(303);
    for (const again of [await allow(path, '2'), await owner.browser.post(path, { decision: 'deny' })]) {
      expect(again.statusCode).toBe(303);
      expect(again.headers.location).toBe(first.headers.location);
    }
    const [granted, ...others] = await grants();
    expect(others).toEqual([]);
    expect(granted!.revoked).toBe(false);
    // The client gets the first answer: its grant, with its budget.
    const resumed = await owner.browser.get(String(first.headers.location));
    const code = new URL(String(resumed.headers.location)).searchParams.get('code')!;
    const token = await exchange(h, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: verifier });
    expect(token.statusCode, token.body).toBe(200);
    const key = (await mcpCall(h, token.json().access_token, 'get-balance')).json().result.structuredContent.key;
    expect(key).toMatchObject({ id: granted!.id, can_place_orders: true, budget: { day: { limit_cents: 100 } } });

    const path2 = await startAuthorization(owner.browser, { clientId: client.client_id, scope: 'read spend', challenge: pkcePair().challenge });
    const both = await Promise.all([allow(path2, '3'), allow(path2, '4')]);
    expect(both.map((r) => r.statusCode)).toEqual([303, 303]);
    expect(both[0]!.headers.location).toBe(both[1]!.headers.location);
    expect((await grants()).map((g) => g.revoked)).toEqual([false, false]);
  });

  it('another browser cannot answer someone\'s consent page (the interaction is bound to its cookie)', async () => {
    const owner = await personIn(h, 'owner');
    const intruder = await personIn(h, 'owner');
    const client = await register(h);
    const path = await startAuthorization(owner.browser, { clientId: client.client_id, scope: 'read', challenge: pkcePair().challenge });
    expect((await intruder.browser.get(path)).statusCode).toBe(404);
    const { final } = await answerConsent(owner.browser, path, { decision: 'allow', workspace_id: String(owner.workspaceId) });
    expect(final!.searchParams.get('code')).toBeTruthy();
  });
});

it('a client ID metadata document on a loopback address is not fetched without OUTBOUND_ALLOW_LOOPBACK', async () => {
  const person = await personIn(noLoopback);
  const res = await person.browser.get(authorizeUrl({ clientId: 'https://127.0.0.1:9/client.json', scope: 'read', challenge: pkcePair().challenge }));
  expect(res.statusCode).toBe(400);
  expect(res.body).toContain('invalid_client');
});

describe('logs', () => {
  it('hold no access or refresh token, code, verifier or client secret, wherever they were sent', async () => {
    const g = await grantedTokens(h);
    const refreshed = (await exchange(h, { grant_type: 'refresh_token', refresh_token: g.tokens.refresh_token!, client_id: g.client.client_id })).json();
    const confidential = await register(h, { token_endpoint_auth_method: 'client_secret_post' });
    expect(confidential.client_secret).toBeTruthy();
    await exchange(h, { grant_type: 'authorization_code', code: 'not-a-code', redirect_uri: REDIRECT, client_id: confidential.client_id, client_secret: confidential.client_secret!, code_verifier: g.verifier });
    await exchange(h, { grant_type: 'refresh_token', refresh_token: g.tokens.refresh_token!, client_id: g.client.client_id }); // reused: revokes
    await mcpCall(h, refreshed.access_token, 'get-balance');
    // Secrets where a careless client puts them: the query string.
    await h.app.inject({ url: `/mcp/oauth?access_token=${refreshed.access_token}` });
    await h.app.inject({ url: `/oauth/token?code=${g.code}&code_verifier=${g.verifier}&client_secret=${confidential.client_secret}&refresh_token=${refreshed.refresh_token}` });
    await h.app.inject({ method: 'POST', url: '/oauth/token/revocation', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `token=${refreshed.access_token}&client_id=${g.client.client_id}` });
    const log = h.logs.join('');
    expect(log).toContain('/oauth/token');
    for (const secret of [g.tokens.access_token, g.tokens.refresh_token!, refreshed.access_token, refreshed.refresh_token, g.code, g.verifier, confidential.client_secret!]) {
      expect(log).not.toContain(secret);
    }
  });

  it('redactUrl drops OAuth secrets in any spelling and keeps the rest', () => {
    expect(redactUrl('/cb?code=abc&state=s')).toBe('/cb?code=[REDACTED]&state=s');
    expect(redactUrl('/x?Client_Secret=abc&access%5Ftoken=t&code_verifier=v')).toBe('/x?Client_Secret=[REDACTED]&access%5Ftoken=[REDACTED]&code_verifier=[REDACTED]');
    expect(redactUrl('/oauth/auth?code_challenge=c&client_id=x')).toBe('/oauth/auth?code_challenge=c&client_id=x');
  });
});
