import { describe, expect, it } from 'vitest';
import { setupApp } from '../helpers/app.js';
import { personIn } from './helpers.js';

// When OAuth for agents is on without PUBLIC_BASE_URL (docs/oauth.md, "Setting"): on a loopback
// HOST its URLs are http://HOST:PORT, whatever a request's Host says; on any other HOST it stays
// off, the server says why once in its log, and Settings → Connected apps names the setting.

const loopback = await setupApp({ PUBLIC_BASE_URL: undefined, HOST: '127.0.0.1', PORT: 4100 });
const everywhere = await setupApp({ PUBLIC_BASE_URL: undefined, HOST: '0.0.0.0', PORT: 4100 }, { database: loopback.database });
const published = await setupApp({ PUBLIC_BASE_URL: 'https://market.example', HOST: '0.0.0.0', PORT: 4100 }, { database: loopback.database });
const BASE = 'http://127.0.0.1:4100';

const METADATA = ['/.well-known/oauth-protected-resource/mcp/oauth', '/.well-known/oauth-authorization-server/oauth', '/oauth/.well-known/openid-configuration'];
const rpc = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
const mcpHeaders = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };

describe('OAuth without PUBLIC_BASE_URL', () => {
  it('on a loopback HOST: on, every URL built from HOST and PORT, never from the Host header', async () => {
    const resource = await loopback.app.inject({ url: METADATA[0]!, headers: { host: 'evil.example' } });
    expect(resource.statusCode).toBe(200);
    expect(resource.json()).toMatchObject({ resource: `${BASE}/mcp/oauth`, authorization_servers: [`${BASE}/oauth`] });
    for (const url of METADATA.slice(1)) {
      const res = await loopback.app.inject({ url, headers: { host: 'evil.example:9' } });
      expect(res.statusCode, url).toBe(200);
      expect(res.json().issuer, url).toBe(`${BASE}/oauth`);
      expect(res.json().registration_endpoint, url).toBe(`${BASE}/oauth/reg`);
    }
    const challenge = await loopback.app.inject({ method: 'POST', url: '/mcp/oauth', headers: mcpHeaders, payload: rpc });
    expect(challenge.statusCode).toBe(401);
    expect(challenge.headers['www-authenticate']).toContain(`resource_metadata="${BASE}/.well-known/oauth-protected-resource/mcp/oauth"`);
    expect(loopback.logs.some((l) => l.includes('OAuth is off'))).toBe(false);
  });

  it('on HOST=0.0.0.0: off, /mcp/oauth, /oauth and the metadata answer 404, and one warning names the setting and why', async () => {
    for (const url of METADATA) expect((await everywhere.app.inject({ url })).statusCode, url).toBe(404);
    expect((await everywhere.app.inject({ method: 'POST', url: '/mcp/oauth', headers: mcpHeaders, payload: rpc })).statusCode).toBe(404);
    const warnings = everywhere.logs.filter((l) => l.includes('OAuth is off until PUBLIC_BASE_URL is set'));
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0]!)).toMatchObject({ level: 40, msg: expect.stringContaining('HOST 0.0.0.0 is not a loopback address') });
  });

  it('Connected apps says OAuth is off and names PUBLIC_BASE_URL instead of "No connected apps"', async () => {
    const { browser, workspaceId } = await personIn(everywhere);
    const page = await browser.get(`/app/w/${workspaceId}/settings/connected-apps`);
    expect(page.statusCode).toBe(200);
    const off = /<p id="oauth-off">([\s\S]*?)<\/p>/.exec(page.body)?.[1];
    expect(off).toContain('OAuth for agents is off on this server');
    expect(off).toContain('HOST 0.0.0.0 is not a loopback address');
    expect(off).toContain('<code>PUBLIC_BASE_URL</code>');
    expect(off).toContain(`/app/w/${workspaceId}/settings/api-keys`);
    expect(page.body).not.toContain('No connected apps');
    // A new key's page says the same where it tells how to connect an agent.
    const made = await browser.post(`/app/w/${workspaceId}/settings/api-keys`, { name: 'Agent' });
    expect(made.statusCode, made.body).toBe(200);
    const hint = /<p id="mcp-oauth">([\s\S]*?)<\/p>/.exec(made.body)?.[1];
    expect(hint).toContain('cannot connect to this server yet (HOST 0.0.0.0 is not a loopback address');
    expect(hint).toContain('<code>PUBLIC_BASE_URL</code>');
    expect(made.body).toContain('id="mcp-config"');
  });

  it('PUBLIC_BASE_URL on any HOST: on at that URL; a new key\'s page gives it, without the loopback caveat', async () => {
    const resource = await published.app.inject({ url: METADATA[0]!, headers: { host: '127.0.0.1:4100' } });
    expect(resource.statusCode).toBe(200);
    expect(resource.json().resource).toBe('https://market.example/mcp/oauth');
    const { browser, workspaceId } = await personIn(published);
    const made = await browser.post(`/app/w/${workspaceId}/settings/api-keys`, { name: 'Agent' });
    expect(made.statusCode, made.body).toBe(200);
    const hint = /<p id="mcp-oauth">([\s\S]*?)<\/p>/.exec(made.body)![1]!;
    expect(hint).toContain('<code>https://market.example/mcp/oauth</code>');
    expect(hint).not.toContain('this machine only');
    expect(made.body).toContain('&quot;url&quot;: &quot;https://market.example/mcp&quot;');
  });

  it('Connected apps, with OAuth on and nothing connected yet, gives the URL to add', async () => {
    const { browser, workspaceId } = await personIn(loopback);
    const page = await browser.get(`/app/w/${workspaceId}/settings/connected-apps`);
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain('id="oauth-off"');
    expect(page.body).toContain(`No connected apps yet. An app connects when a person adds <code>${BASE}/mcp/oauth</code>`);
  });
});
