import type { IncomingMessage, ServerResponse } from 'node:http';
import type pg from 'pg';
import type Provider from 'oidc-provider';
import type { AdapterPayload, Configuration, errors, KoaContextWithOIDC } from 'oidc-provider';
import { oauthKeys } from '../../domain/oauth/secrets.js';
import { clientSecretMatches, oauthStore } from '../../domain/oauth/store.js';
import { UNSTORABLE_TEXT_MESSAGE, unstorableTextPath } from '../../domain/text-input.js';
import type { OutboundClient } from '../../outbound/http-client.js';

/** The two scopes of the MCP endpoint: `read` is every tool but spending, `spend` adds spending. */
export const OAUTH_SCOPES = ['read', 'spend'] as const;

/** Where everything OAuth lives, built from the configured base URL alone (`oauthBase` in config.ts; never from a request's Host). */
export interface OAuthUrls {
  /** `<base>/oauth`, the authorization server's issuer. */
  issuer: string;
  /** `<base>/mcp/oauth`, the protected resource and every token's audience. */
  resource: string;
  /** RFC 9728 metadata of the resource. */
  resourceMetadata: string;
}

export function oauthUrls(publicBaseUrl: string): OAuthUrls {
  const base = publicBaseUrl.replace(/\/+$/, '');
  return {
    issuer: `${base}/oauth`,
    resource: `${base}/mcp/oauth`,
    resourceMetadata: `${base}/.well-known/oauth-protected-resource/mcp/oauth`,
  };
}

const ACCESS_TOKEN_SECONDS = 3600;
const CIMD_MAX_BYTES = 5120;
const CIMD_TIMEOUT_MS = 2500;

export interface ProviderDeps {
  urls: OAuthUrls;
  pool: pg.Pool;
  /** The SSRF-safe client that fetches client ID metadata documents (loopback only when OUTBOUND_ALLOW_LOOPBACK). */
  outbound: OutboundClient;
  onGrantRevoked(grantId: string): Promise<void>;
  onServerError(err: unknown): void;
}

/**
 * The library's fetch (client ID metadata documents), done by the service's outbound client,
 * which judges every address it connects to by the service's own policy. Redirects are not
 * followed: the document must be at its id.
 */
function outboundFetch(outbound: OutboundClient) {
  return async (url: string | URL): Promise<Response> => {
    const page = await outbound.get(String(url), { timeoutMs: CIMD_TIMEOUT_MS, maxBytes: CIMD_MAX_BYTES });
    if (!page.ok) throw new Error(`client metadata fetch failed: ${page.reason}`);
    if (page.redirects.length > 0) return new Response(null, { status: 502 });
    return new Response(page.body, { status: page.status, headers: page.headers });
  };
}

/**
 * The library, loaded on first use (a server that never sees OAuth never loads it). On import it
 * prints "Unsupported runtime" on any Node before 22, which this service supports (20.19+, where
 * its whole suite passes); that one line is held back, any other warning of the library is not.
 */
async function loadLibrary() {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (!String(args[0]).includes('oidc-provider WARNING: Unsupported runtime')) warn(...args);
  };
  try {
    return await import('oidc-provider');
  } finally {
    console.warn = warn;
  }
}

/**
 * The store, as the library uses it. A record holding text PostgreSQL cannot store (a NUL in an
 * authorization request's `state`, say) comes from a client's parameters: it is refused as that
 * client's invalid_request, as the library answers any bad parameter, not left to fail as a
 * server error.
 */
function libraryStore(pool: pg.Pool, InvalidRequest: typeof errors.InvalidRequest) {
  return class extends oauthStore(pool) {
    override async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      const path = unstorableTextPath(payload);
      if (path !== undefined) throw new InvalidRequest(`${path.split('.').pop()} ${UNSTORABLE_TEXT_MESSAGE}`);
      return super.upsert(id, payload, expiresIn);
    }
  };
}

/** Hosts an `http` redirect URI may name: the person's own machine (RFC 8252's loopback redirect). */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Why a redirect URI may not receive codes, if it may not. The MCP authorization specification
 * allows `https`, and `http` only on a loopback host: a code sent in clear text over the network
 * can be read on the way. A URI with a user name or password is refused too: it is no place an
 * app's callback lives, and a browser's address bar shows such a URI misleadingly. Other schemes
 * (an app's own, such as `cursor:`) are left to the library's rules for native clients.
 */
function redirectUriProblem(uri: string): string | undefined {
  const url = URL.parse(uri);
  if (!url) return undefined; // the library refuses what is no URI
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  if (url.username || url.password) return 'must not contain a user name or password';
  if (url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname)) return 'must use https, or http only on localhost, 127.0.0.1 or [::1]';
  return undefined;
}

const htmlEscape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The provider's own error page (a bad authorization request): the error's name and description, nothing else. */
async function renderError(ctx: KoaContextWithOIDC, out: { error?: string; error_description?: string }) {
  ctx.type = 'html';
  const code = htmlEscape(String(out.error ?? 'server_error'));
  const description = htmlEscape(String(out.error_description ?? ''));
  ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in request refused</title></head><body><main><h1>This sign-in request cannot go on</h1><p><code>${code}</code>: ${description}</p><p>Go back to the app you came from and connect again.</p></main></body></html>`;
}

/**
 * The OAuth 2.1 authorization server (oidc-provider; docs/oauth.md): authorization code with PKCE
 * S256 only, dynamic registration, client ID metadata documents, resource indicators with one
 * resource (the MCP endpoint), `iss` in the authorization response, rotating refresh tokens,
 * revocation. Its login and consent are console pages (`/app/oauth/:uid`).
 */
export async function createProvider(deps: ProviderDeps): Promise<Provider> {
  const { urls } = deps;
  const { default: Provider, errors } = await loadLibrary();
  const keys = await oauthKeys(deps.pool);
  const configuration: Configuration = {
    adapter: libraryStore(deps.pool, errors.InvalidRequest),
    clients: [],
    jwks: { keys: [keys.signingJwk as never] },
    cookies: { keys: keys.cookieKeys },
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
    claims: { openid: ['sub'] },
    // `read` and `spend` are the resource's scopes (resourceIndicators below); listed here too, so a
    // client may register with them and the metadata names them. The consent grants them both ways.
    scopes: ['openid', 'offline_access', ...OAUTH_SCOPES],
    responseTypes: ['code'],
    // Client secrets are stored hashed (store.ts), so only methods that send the secret itself:
    // client_secret_jwt signs with the secret, which the server no longer has (nor HS256 then).
    clientAuthMethods: ['none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt'],
    pkce: { required: () => true },
    interactions: { url: async (_ctx, interaction) => `/app/oauth/${interaction.uid}` },
    // Every authorization asks the person again (which workspace, what budget): a grant is never
    // reused from the provider's session.
    loadExistingGrant: async (ctx) => {
      const grantId = ctx.oidc.result?.consent?.grantId;
      return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
    },
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    // Always rotated; a refresh token used twice revokes the whole grant (the library does it).
    // The library asks this just before it uses the token up, but checks the requested resource
    // only after: a refresh naming another resource would spend the token, and the next, correct
    // one would count as reuse and revoke the grant. So the resource is checked here first, as the
    // library checks a wrong scope before the token is used.
    rotateRefreshToken: (ctx) => {
      const asked = ctx.oidc.params?.resource as string | string[] | undefined;
      if (asked !== undefined && [asked].flat().some((r) => r !== urls.resource)) throw new errors.InvalidTarget(`the only resource here is ${urls.resource}`);
      return true;
    },
    allowOmittingSingleRegisteredRedirectUri: false,
    ttl: {
      AccessToken: ACCESS_TOKEN_SECONDS,
      AuthorizationCode: 60,
      Interaction: 3600,
      Session: 14 * 86_400,
      Grant: 365 * 86_400,
      RefreshToken: 30 * 86_400,
    },
    features: {
      devInteractions: { enabled: false },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      registration: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => urls.resource,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, indicator) => {
          if (indicator !== urls.resource) throw new errors.InvalidTarget(`the only resource here is ${urls.resource}`);
          return { scope: OAUTH_SCOPES.join(' '), audience: urls.resource, accessTokenTTL: ACCESS_TOKEN_SECONDS, accessTokenFormat: 'opaque' };
        },
      },
      clientIdMetadataDocument: { enabled: true, ack: 'draft-02' },
    } as Configuration['features'],
    // The library's documented way to extend its checks of a standard property: listing
    // redirect_uris here has this validator see every client's metadata (a registration, a client
    // ID metadata document, a stored client when loaded) before the library's own checks.
    extraClientMetadata: {
      properties: ['redirect_uris'],
      validator: (_ctx: unknown, _key: string, value: unknown, metadata: Record<string, unknown>) => {
        // Stored as jsonb, where such text fails as a server error or comes back changed.
        const unstorable = unstorableTextPath(metadata);
        if (unstorable !== undefined) throw new errors.InvalidClientMetadata(`${unstorable} ${UNSTORABLE_TEXT_MESSAGE}`);
        if (!Array.isArray(value)) return; // the library refuses it
        for (const uri of value) {
          const problem = typeof uri === 'string' ? redirectUriProblem(uri) : undefined;
          // "redirect_uris…" makes the library answer invalid_redirect_uri.
          if (problem) throw new errors.InvalidClientMetadata(`redirect_uris ${problem}`);
        }
      },
    },
    fetch: outboundFetch(deps.outbound) as unknown as Configuration['fetch'],
    fetchResponseBodyLimits: { 'client_id metadata document': CIMD_MAX_BYTES } as never,
    renderError,
  } as Configuration;
  const provider = new Provider(urls.issuer, configuration);
  // The forwarded headers it reads are written by routes.ts from the configured base URL and Fastify's own judgement.
  provider.proxy = true;
  // A stored secret is its hash: the library's documented way to compare it otherwise is this method.
  provider.Client.prototype.compareClientSecret = function compareClientSecret(this: { clientSecret?: string }, actual: string) {
    return clientSecretMatches(this.clientSecret, actual);
  };
  // Reading a registration back (RFC 7592) would show the stored hash as the client's secret: a
  // client that saved it would lose the real one. The secret is shown once, at registration.
  provider.use(async (ctx, next) => {
    await next();
    const oidc = (ctx as KoaContextWithOIDC).oidc as KoaContextWithOIDC['oidc'] | undefined;
    if (oidc?.route === 'client' && ctx.body && typeof ctx.body === 'object') delete (ctx.body as { client_secret?: unknown }).client_secret;
  });
  provider.on('grant.revoked', (_ctx: unknown, grantId: string) => {
    deps.onGrantRevoked(grantId).catch(deps.onServerError);
  });
  provider.on('server_error', (_ctx: unknown, err: unknown) => deps.onServerError(err));
  return provider;
}

export type OAuthProvider = Provider;
export type RawHandler = (req: IncomingMessage, res: ServerResponse) => void;
