import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type Koa from 'koa';
import type { Limiter } from '../plugins/rate-limit.js';
import { OAUTH_SCOPES, type OAuthProvider } from './provider.js';
import type { OAuthServer } from './server.js';
import { type Next, mountMiddleware } from './mount.js';

/** Dynamic client registrations allowed per client address per minute (RFC 7591 is open to anyone). */
export const REGISTRATIONS_PER_MINUTE = 10;

/**
 * Whether a path the library is handed is its route `route`, as its router decides: ASCII letters
 * in any case, and once more without one final slash (`/reg`, `/Reg`, `/REG/`). A non-ASCII letter
 * never matches an ASCII one there (nor here: only ASCII is folded).
 */
function isLibraryRoute(path: string, route: string): boolean {
  const fold = (s: string) => s.replace(/[a-z]/g, (c) => c.toUpperCase());
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return fold(path) === fold(route) || fold(trimmed) === fold(route);
}

/**
 * The library's own hook before its router (`provider.use`), which sees the path exactly as the
 * router will (`ctx.path`): registrations are counted per address on the route the library
 * serves, whatever its spelling; an authorization request that names no scope asks for `read`
 * (docs/oauth.md; the library would otherwise grant the resource nothing).
 */
function beforeRoutes(p: OAuthProvider, limiter: Limiter) {
  const registration = p.pathFor('registration', { mountPath: '' });
  const authorization = p.pathFor('authorization', { mountPath: '' });
  const mount = new URL(p.issuer).pathname;
  return async (ctx: Koa.Context, next: Koa.Next) => {
    if (ctx.method === 'POST' && isLibraryRoute(ctx.path, registration)) {
      const limit = await limiter.hit(`oauth-reg:${(ctx.req as { ip?: string }).ip ?? ctx.ip}`, REGISTRATIONS_PER_MINUTE);
      if (limit.exceeded) {
        ctx.status = 429;
        ctx.set('retry-after', String(limit.retryAfterSeconds));
        ctx.body = { error: 'rate_limited', error_description: 'Too many client registrations from this address. Retry later.' };
        return;
      }
    }
    if ((ctx.method === 'GET' || ctx.method === 'HEAD') && isLibraryRoute(ctx.path, authorization) && !new URLSearchParams(ctx.querystring).has('scope')) {
      ctx.querystring = `${ctx.querystring}${ctx.querystring ? '&' : ''}scope=read`;
      // The library finds its mount path by looking for the URL in originalUrl (routes.ts sets it).
      (ctx.req as { originalUrl?: string }).originalUrl = `${mount}${ctx.url}`;
    }
    await next();
  };
}

/**
 * The authorization server under /oauth (oidc-provider, mounted as @fastify/middie mounts it: mount.ts), its RFC 8414
 * metadata at /.well-known/oauth-authorization-server/oauth, and the protected resource's RFC 9728
 * metadata at /.well-known/oauth-protected-resource/mcp/oauth. Nothing at the site root or
 * under /mcp: a client of /mcp that found OAuth metadata there would drop its configured key.
 */
export const oauthRoutes = fp(
  async function oauthRoutes(app: FastifyInstance, opts: { oauth: OAuthServer; limiter: Limiter }) {
    const { oauth, limiter } = opts;
    // The library builds its links from the request: it is told the public URL's scheme and host
    // (never the Host a client sent), the address Fastify judged (TRUST_PROXY), and that it is
    // mounted at /oauth, overwriting whatever the client wrote. Done here, on what middie hands
    // the library, because middie matches the prefix in any case and percent-decoded (`/OAUTH/…`,
    // `/%6Fauth/…`): a check of Fastify's URL would miss those spellings.
    const issuer = new URL(oauth.urls.issuer);
    let callback: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
    const handle = (req: IncomingMessage & { ip?: string; originalUrl?: string }, res: ServerResponse, next: Next) => {
      const headers = req.headers;
      headers['x-forwarded-host'] = issuer.host;
      headers['x-forwarded-proto'] = issuer.protocol.slice(0, -1);
      headers['x-forwarded-for'] = req.ip ?? req.socket.remoteAddress ?? '';
      // The library finds its mount path in originalUrl: its links are under /oauth, however the request spelled it.
      req.originalUrl = `${issuer.pathname}${req.url}`;
      oauth
        .provider()
        .then((p) => {
          callback ??= p.use(beforeRoutes(p, limiter)).callback() as (req: IncomingMessage, res: ServerResponse) => void;
          callback(req, res);
        })
        .catch(next);
    };

    mountMiddleware(app, [
      ['/oauth', handle],
      [
        '/.well-known/oauth-authorization-server/oauth',
        (req: IncomingMessage, res: ServerResponse, next: Next) => {
          const path = (req.url ?? '/').split('?')[0];
          if ((req.method !== 'GET' && req.method !== 'HEAD') || (path !== '/' && path !== '')) return next();
          req.url = '/.well-known/openid-configuration';
          handle(req, res, next);
        },
      ],
    ]);

    app.get(
      '/.well-known/oauth-protected-resource/mcp/oauth',
      { config: { auth: 'public' }, schema: { hide: true } },
      async (_request, reply) =>
        reply.header('access-control-allow-origin', '*').send({
          resource: oauth.urls.resource,
          authorization_servers: [oauth.urls.issuer],
          scopes_supported: [...OAUTH_SCOPES],
          bearer_methods_supported: ['header'],
          resource_name: 'Marketplace MCP server',
          resource_documentation: `${oauth.urls.issuer.replace(/\/oauth$/, '')}/docs`,
        }),
    );
  },
  { name: 'oauth-routes' },
);
