import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type OAuthClientProvider, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember } from '../../src/domain/users/memberships.js';
import { createUser } from '../../src/domain/users/user-service.js';
import { publisherWithOutlet } from '../helpers/catalog.js';
import { cleanupChildren, type ServerChild, spawnServer } from '../helpers/child.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { workspaceWithKeys } from '../helpers/fixtures.js';
import { freePort } from '../helpers/pg-server.js';
import { allowBrowserFlows, checkPage, launchBrowser, NO_BROWSER, requireBrowser, skipBrowser } from '../console/browser-harness.js';

allowBrowserFlows();

// The whole flow as an agent's platform does it, with the MCP SDK's own client against the real
// server (a child process): discovery from the 401, registration (dynamic, then a client ID
// metadata document served here over https on loopback, trusted by the server through
// NODE_EXTRA_CA_CERTS), sign-in and consent in Chromium with the page's CSP in force, the code
// exchanged, then tools listed and an order placed through quote → confirm with a spend grant.

if (skipBrowser) console.log(`OAuth SDK flow skipped: ${NO_BROWSER}`);

const password = 'correct horse battery';

/** The SDK's OAuth client state, kept in memory; the authorization URL goes to the browser. */
class MemoryProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  constructor(
    private readonly callback: string,
    readonly clientMetadataUrl?: string,
  ) {}
  get redirectUrl() {
    return this.callback;
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'SDK Agent', redirect_uris: [this.callback], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

const listenOn = (server: Server) => new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));

describe.skipIf(skipBrowser)('MCP SDK client: OAuth end to end', () => {
  let db: TestDatabase;
  let server: ServerChild;
  let browser: Browser;
  let mcpUrl: URL;
  let callback: string;
  let metadataUrl: string;
  let certDir: string;
  const codes: string[] = [];
  const servers: Server[] = [];
  const person = { email: `sdk-${Date.now()}@example.com`, workspaceId: 0 };
  let firstAuthorization: URL | undefined;

  beforeAll(async () => {
    db = await createTestDatabase();
    // A certificate for 127.0.0.1, trusted by the server process only.
    certDir = mkdtempSync(join(tmpdir(), 'oauth-cert-'));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(certDir, 'key.pem'), '-out', join(certDir, 'cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });

    const cb = createHttpServer((req, res) => {
      const code = new URL(req.url ?? '/', 'http://127.0.0.1').searchParams.get('code');
      if (code) codes.push(code);
      res.writeHead(200, { 'content-type': 'text/plain' }).end(code ? 'Connected. You can close this tab.' : 'No code.');
    });
    servers.push(cb);
    callback = `http://127.0.0.1:${await listenOn(cb)}/callback`;

    const https = createHttpsServer({ key: readFileSync(join(certDir, 'key.pem')), cert: readFileSync(join(certDir, 'cert.pem')) }, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' }).end(
        JSON.stringify({ client_id: metadataUrl, client_name: 'CIMD Agent', redirect_uris: [callback], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' }),
      );
    });
    servers.push(https as unknown as Server);
    metadataUrl = `https://127.0.0.1:${await listenOn(https as unknown as Server)}/client.json`;

    const { workspaceId } = await workspaceWithKeys(db.pool, { balanceCents: 1_000_000 });
    const user = await createUser(db.pool, { email: person.email, name: 'Sam Owner', password });
    await addMember(db.pool, { workspaceId }, user.id, 'owner');
    person.workspaceId = workspaceId;

    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    server = await spawnServer(
      { DATABASE_URL: db.url, PUBLIC_BASE_URL: base, OUTBOUND_ALLOW_LOOPBACK: 'true', NODE_EXTRA_CA_CERTS: join(certDir, 'cert.pem'), LOG_LEVEL: 'info' },
      { port },
    );
    await server.waitHealthy(60_000);
    mcpUrl = new URL('/mcp/oauth', base);
    browser = await launchBrowser(requireBrowser());
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await cleanupChildren();
    for (const s of servers) s.close();
    await db?.drop();
    if (certDir) rmSync(certDir, { recursive: true, force: true });
  });

  /** Sign-in and consent in Chromium, the consent page's own CSP in force; answers the code the callback got. */
  async function consentInBrowser(url: URL, clientName: string, askFirst: boolean) {
    const context = await browser.newContext({ bypassCSP: false });
    const page = await context.newPage();
    const before = codes.length;
    await page.goto(url.href);
    await page.waitForURL(/\/app\/sign-in/);
    await page.getByLabel('Email').fill(person.email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/app\/oauth\//);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(`Connect ${clientName}`);
    await page.getByLabel('Workspace', { exact: true }).selectOption(String(person.workspaceId));
    await page.getByLabel('Can place orders', { exact: true }).check();
    await page.getByLabel('Limit per day', { exact: true }).fill('5000');
    // Ticked by default for an app that may spend (docs/approvals.md).
    const ask = page.getByLabel("Orders need a person's approval", { exact: true });
    expect(await ask.isChecked()).toBe(true);
    if (!askFirst) await ask.uncheck();
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL((u) => u.href.startsWith(callback));
    await context.close();
    expect(codes.length).toBe(before + 1);
    return codes[codes.length - 1]!;
  }

  async function connectWith(provider: MemoryProvider, clientName: string, askFirst = false) {
    const first = new Client({ name: 'sdk-oauth-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
    await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.authorizationUrl?.pathname).toBe('/oauth/auth');
    expect(provider.authorizationUrl?.searchParams.get('scope')).toBe('read spend');
    expect(provider.authorizationUrl?.searchParams.get('code_challenge_method')).toBe('S256');
    const code = await consentInBrowser(provider.authorizationUrl!, clientName, askFirst);
    await transport.finishAuth(code);
    expect(provider.saved?.access_token).toBeTruthy();
    const client = new Client({ name: 'sdk-oauth-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
    return client;
  }

  async function quoteAndConfirm(client: Client, stage: 'done' | 'approval_pending' = 'done') {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['get-balance', 'place-orders', 'approve-placement']));
    const p = await publisherWithOutlet(db, [{ publisher_price_cents: 10_000 }]);
    const args = { offer_ids: [p.offers[0]!.id], target_url: 'https://buyer.example/' };
    const quote = (await client.callTool({ name: 'place-orders', arguments: args })) as CallToolResult;
    expect(quote.isError, JSON.stringify(quote.content)).toBeFalsy();
    const token = (quote.structuredContent as { confirmation_token: string }).confirmation_token;
    const done = (await client.callTool({ name: 'place-orders', arguments: { ...args, confirmation_token: token } })) as CallToolResult;
    expect(done.isError, JSON.stringify(done.content)).toBeFalsy();
    expect(done.structuredContent).toMatchObject({ stage });
    const balance = (await client.callTool({ name: 'get-balance', arguments: {} })) as CallToolResult;
    return (balance.structuredContent as { key: Record<string, unknown> }).key;
  }

  it('dynamic registration: discovers, registers, consents in Chromium, places an order with a spend grant', async () => {
    const provider = new MemoryProvider(callback);
    const client = await connectWith(provider, 'SDK Agent', true);
    firstAuthorization = provider.authorizationUrl;
    expect(provider.info?.client_id).toBeTruthy();
    expect(provider.info?.client_id).not.toBe(metadataUrl);
    // Consent left "Orders need a person's approval" ticked: the order waits for a person.
    const key = await quoteAndConfirm(client, 'approval_pending');
    expect(key).toMatchObject({ name: 'SDK Agent', prefix: 'oauth', can_place_orders: true, needs_approval: true });
    expect((key.budget as { day: { limit_cents: number } }).day.limit_cents).toBe(500_000);
    await client.close();
  }, 120_000);

  it('a client ID metadata document over https: the server fetches it (loopback allowed, certificate trusted) and names the client from it', async () => {
    const provider = new MemoryProvider(callback, metadataUrl);
    const client = await connectWith(provider, 'CIMD Agent');
    expect(provider.info?.client_id).toBe(metadataUrl);
    const key = await quoteAndConfirm(client);
    expect(key).toMatchObject({ name: 'CIMD Agent', prefix: 'oauth', can_place_orders: true, needs_approval: false });
    await client.close();
    // No token, code or verifier reached the server's log.
    const log = server.stdout() + server.stderr();
    for (const secret of [provider.saved!.access_token, provider.saved!.refresh_token, provider.verifier, ...codes].filter(Boolean)) expect(log).not.toContain(secret!);
  }, 120_000);

  it('the consent and Connected apps pages pass axe-core; Deny goes back to the client with access_denied', async () => {
    expect(firstAuthorization).toBeDefined();
    // axe is injected, so this context bypasses the CSP (the flows above keep it).
    const context = await browser.newContext({ bypassCSP: true });
    const page = await context.newPage();
    await page.goto(firstAuthorization!.href);
    await page.getByLabel('Email').fill(person.email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/app\/oauth\//);
    await checkPage(page, 'oauth-consent');
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.waitForURL((u) => u.href.startsWith(callback));
    expect(new URL(page.url()).searchParams.get('error')).toBe('access_denied');
    await page.goto(new URL(`/app/w/${person.workspaceId}/settings/connected-apps`, mcpUrl).href);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Connected apps');
    await checkPage(page, 'connected-apps');
    await page.getByRole('link', { name: /^Revoke SDK Agent/ }).click();
    await checkPage(page, 'connected-app-revoke');
    await context.close();
  }, 120_000);
});
