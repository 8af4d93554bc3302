import { describe, expect, it } from 'vitest';
import { setupApp } from '../helpers/app.js';
import { PUBLIC, RESOURCE } from './helpers.js';

const h = await setupApp({ PUBLIC_BASE_URL: PUBLIC });

const rpc = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
const mcpHeaders = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };

describe('OAuth discovery (MCP authorization, RFC 9728, RFC 8414)', () => {
  it('/mcp/oauth without a token: 401 naming the resource metadata and the scopes', async () => {
    const res = await h.app.inject({ method: 'POST', url: '/mcp/oauth', headers: mcpHeaders, payload: rpc });
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe(`Bearer resource_metadata="${PUBLIC}/.well-known/oauth-protected-resource/mcp/oauth", scope="read spend"`);
    expect(res.json()).toMatchObject({ code: 'unauthenticated' });
    const bad = await h.app.inject({ method: 'POST', url: '/mcp/oauth', headers: { ...mcpHeaders, authorization: 'Bearer not-a-token' }, payload: rpc });
    expect(bad.statusCode).toBe(401);
    expect(bad.headers['www-authenticate']).toContain('error="invalid_token"');
  });

  it('an API key is not an access token on /mcp/oauth', async () => {
    const { workspaceWithKeys } = await import('../helpers/fixtures.js');
    const ws = await workspaceWithKeys(h.database.pool);
    const res = await h.app.inject({ method: 'POST', url: '/mcp/oauth', headers: { ...mcpHeaders, authorization: `Bearer ${ws.readKey}` }, payload: rpc });
    expect(res.statusCode).toBe(401);
    const ok = await h.app.inject({ method: 'POST', url: '/mcp', headers: { ...mcpHeaders, authorization: `Bearer ${ws.readKey}` }, payload: rpc });
    expect(ok.statusCode).toBe(200);
  });

  it('the protected resource metadata names the resource, the issuer and the scopes, whatever the Host header says', async () => {
    const res = await h.app.inject({ url: '/.well-known/oauth-protected-resource/mcp/oauth', headers: { host: 'evil.example' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ resource: RESOURCE, authorization_servers: [`${PUBLIC}/oauth`], scopes_supported: ['read', 'spend'] });
  });

  for (const url of ['/.well-known/oauth-authorization-server/oauth', '/oauth/.well-known/openid-configuration']) {
    it(`authorization server metadata at ${url}: PKCE S256, registration, client ID metadata documents, code only`, async () => {
      const res = await h.app.inject({ url, headers: { host: 'evil.example' } });
      expect(res.statusCode).toBe(200);
      const m = res.json();
      expect(m.issuer).toBe(`${PUBLIC}/oauth`);
      expect(m.code_challenge_methods_supported).toEqual(['S256']);
      expect(m.registration_endpoint).toBe(`${PUBLIC}/oauth/reg`);
      expect(m.client_id_metadata_document_supported).toBe(true);
      expect(m.authorization_response_iss_parameter_supported).toBe(true);
      expect(m.response_types_supported).toEqual(['code']);
      expect(m.grant_types_supported).not.toContain('implicit');
      expect(m.grant_types_supported).not.toContain('password');
      expect(m.revocation_endpoint).toBe(`${PUBLIC}/oauth/token/revocation`);
      expect(m.end_session_endpoint).toBeUndefined();
      expect(m.userinfo_endpoint).toBeUndefined();
      expect(m.authorization_endpoint.startsWith(`${PUBLIC}/oauth/`)).toBe(true);
    });
  }

  it('nothing at the site root or under /mcp: a client of /mcp finds no OAuth', async () => {
    for (const url of [
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-authorization-server',
      '/.well-known/openid-configuration',
      '/mcp/.well-known/openid-configuration',
      '/.well-known/oauth-authorization-server/mcp',
    ]) {
      const res = await h.app.inject({ url });
      expect(res.statusCode, url).toBe(404);
    }
  });

  it('/mcp answers a request without a key as before: 401, Bearer without resource_metadata', async () => {
    const res = await h.app.inject({ method: 'POST', url: '/mcp', headers: mcpHeaders, payload: rpc });
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });
});
