import { describe, expect, it } from 'vitest';
import { setupApp } from '../helpers/app.js';
import { answerConsent, exchange, grantedTokens, mcpCall, personIn, pkcePair, PUBLIC, REDIRECT, register, startAuthorization } from './helpers.js';

// A grant is seen as a key (docs/oauth.md): its own rate-limit bucket; no scope means read; and a
// flow begun on one process finishes on another (storage and keys are the database's).
const a = await setupApp({ PUBLIC_BASE_URL: PUBLIC, RATE_LIMIT_PER_MINUTE: 3 });
const b = await setupApp({ PUBLIC_BASE_URL: PUBLIC, RATE_LIMIT_PER_MINUTE: 3 }, { database: a.database, clock: a.clock });

describe('a grant as a key', () => {
  it('has its own rate-limit bucket, like a key: the 4th call in a minute is 429', async () => {
    const one = await grantedTokens(a, { scope: 'read' });
    const two = await grantedTokens(a, { scope: 'read' });
    for (let i = 0; i < 3; i++) expect((await mcpCall(a, one.tokens.access_token, 'get-balance')).statusCode).toBe(200);
    const limited = await mcpCall(a, one.tokens.access_token, 'get-balance');
    expect(limited.statusCode).toBe(429);
    expect(limited.json().code).toBe('rate_limited');
    expect((await mcpCall(a, two.tokens.access_token, 'get-balance')).statusCode).toBe(200);
  });

  it('a request with no scope gets read: no "Can place orders" on the page, a read grant', async () => {
    const person = await personIn(a);
    const client = await register(a);
    const { verifier, challenge } = pkcePair();
    const path = await startAuthorization(person.browser, { clientId: client.client_id, challenge });
    expect((await person.browser.get(path)).body).not.toContain('Can place orders');
    const { final } = await answerConsent(person.browser, path, { decision: 'allow', workspace_id: String(person.workspaceId), can_place_orders: '1' });
    const token = await exchange(a, { grant_type: 'authorization_code', code: final!.searchParams.get('code')!, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: verifier });
    expect(token.statusCode, token.body).toBe(200);
    const res = await mcpCall(a, token.json().access_token, 'get-balance');
    const key = JSON.parse(res.json().result.content[0].text).key;
    expect(key).toMatchObject({ prefix: 'oauth', can_place_orders: false, abilities: ['read', 'plan', 'manage_content'] });
  });

  it('a flow begun on one process finishes on another, and its token works on both', async () => {
    const person = await personIn(a);
    const client = await register(b);
    const { verifier, challenge } = pkcePair();
    const path = await startAuthorization(person.browser, { clientId: client.client_id, scope: 'read', challenge });
    const { final } = await answerConsent(person.browser, path, { decision: 'allow', workspace_id: String(person.workspaceId) });
    const token = await exchange(b, { grant_type: 'authorization_code', code: final!.searchParams.get('code')!, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: verifier });
    expect(token.statusCode, token.body).toBe(200);
    expect((await mcpCall(a, token.json().access_token, 'get-balance')).statusCode).toBe(200);
    expect((await mcpCall(b, token.json().access_token, 'get-balance')).statusCode).toBe(200);
  });
});
