import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { Harness } from '../helpers/app.js';
import { workspaceWithKeys } from '../helpers/fixtures.js';
import { addMember } from '../../src/domain/users/memberships.js';
import { createUser } from '../../src/domain/users/user-service.js';
import type { MemberRole } from '../../src/common/enums.js';
import { consoleClient } from '../console/helpers.js';

export const PUBLIC = 'http://127.0.0.1:3000';
export const RESOURCE = `${PUBLIC}/mcp/oauth`;
export const REDIRECT = 'http://127.0.0.1:9999/callback';
const password = 'correct horse battery';

export const pkcePair = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

let people = 0;

/** A person signed in to the console (a browser without JavaScript), with a role in a funded workspace. */
export async function personIn(h: Harness, role: MemberRole = 'owner', workspace?: number) {
  people++;
  const workspaceId = workspace ?? (await workspaceWithKeys(h.database.pool, { balanceCents: 500_000 })).workspaceId;
  const email = `oauth${people}-${randomBytes(3).toString('hex')}@example.com`;
  const user = await createUser(h.database.pool, { email, name: `Person ${people}`, password });
  await addMember(h.database.pool, { workspaceId }, user.id, role);
  const browser = consoleClient(h, `10.9.0.${people % 250}`);
  const signIn = await browser.post('/app/sign-in', { email, password });
  expect(signIn.statusCode).toBe(303);
  return { browser, userId: user.id, workspaceId };
}

let registrations = 0;
/** A client registered by dynamic registration (RFC 7591), public, with one redirect URI; each from its own address (registrations are limited per address). */
export async function register(h: Harness, extra: Record<string, unknown> = {}, remoteAddress = `10.8.${Math.floor(++registrations / 250)}.${registrations % 250}`) {
  const res = await h.app.inject({
    method: 'POST',
    url: '/oauth/reg',
    remoteAddress,
    payload: {
      client_name: 'Test Agent',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...extra,
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { client_id: string; client_secret?: string };
}

export type Browser = Awaited<ReturnType<typeof personIn>>['browser'];

export interface AuthorizeOptions {
  clientId: string;
  scope?: string;
  challenge?: string | null;
  redirectUri?: string;
  resource?: string;
}

export function authorizeUrl(o: AuthorizeOptions) {
  const q = new URLSearchParams({ response_type: 'code', client_id: o.clientId, redirect_uri: o.redirectUri ?? REDIRECT, state: 'st4te' });
  if (o.scope !== undefined) q.set('scope', o.scope);
  if (o.challenge !== null && o.challenge !== undefined) {
    q.set('code_challenge', o.challenge);
    q.set('code_challenge_method', 'S256');
  }
  if (o.resource) q.set('resource', o.resource);
  return `/oauth/auth?${q}`;
}

/** GET the authorization endpoint in the browser: answers the consent page's path. */
export async function startAuthorization(browser: Browser, o: AuthorizeOptions) {
  const res = await browser.get(authorizeUrl(o));
  expect(res.statusCode, res.body).toBe(303);
  const to = String(res.headers.location);
  expect(to).toMatch(/^\/app\/oauth\/[A-Za-z0-9_-]+$/);
  return to;
}

/** Answers the consent page; follows the redirect through /oauth/auth/:uid; answers the client's redirect. */
export async function answerConsent(browser: Browser, consentPath: string, fields: Record<string, string>) {
  const posted = await browser.post(consentPath, fields);
  if (posted.statusCode !== 303) return { posted, final: undefined };
  const resumed = await browser.get(String(posted.headers.location));
  expect(resumed.statusCode, resumed.body).toBe(303);
  if (!/^https?:/.test(String(resumed.headers.location))) throw new Error(`resumed to ${resumed.headers.location}`);
  return { posted, final: new URL(String(resumed.headers.location)) };
}

export async function exchange(h: Harness, fields: Record<string, string>) {
  return h.app.inject({ method: 'POST', url: '/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(fields).toString() });
}

/** The whole flow by inject: a registered client, a signed-in owner's consent (or `person`'s), a code exchanged. */
export async function grantedTokens(
  h: Harness,
  opts: { role?: MemberRole; scope?: string; fields?: Record<string, string>; person?: Awaited<ReturnType<typeof personIn>> } = {},
) {
  const person = opts.person ?? (await personIn(h, opts.role ?? 'owner'));
  const client = await register(h);
  const { verifier, challenge } = pkcePair();
  const consent = await startAuthorization(person.browser, { clientId: client.client_id, scope: opts.scope ?? 'read spend', challenge });
  const { final } = await answerConsent(person.browser, consent, { decision: 'allow', workspace_id: String(person.workspaceId), ...(opts.fields ?? {}) });
  const code = final!.searchParams.get('code')!;
  expect(code).toBeTruthy();
  const token = await exchange(h, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: verifier });
  expect(token.statusCode, token.body).toBe(200);
  return { ...person, client, code, verifier, tokens: token.json() as { access_token: string; refresh_token?: string; scope?: string; token_type: string } };
}

/** One JSON-RPC call to /mcp/oauth with a token. */
export async function mcpCall(h: Harness, token: string | undefined, name: string, args: Record<string, unknown> = {}) {
  return h.app.inject({
    method: 'POST',
    url: '/mcp/oauth',
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
    payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
  });
}
