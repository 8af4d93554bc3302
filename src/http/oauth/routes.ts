import type { IncomingMessage, ServerResponse } from 'node:http';
import middie from '@fastify/middie';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Limiter } from '../plugins/rate-limit.js';
import { OAUTH_SCOPES } from './provider.js';
import type { OAuthServer } from './server.js';

/** Dynamic client registrations allowed per client address per minute (RFC 7591 is open to anyone). */
export const REGISTRATIONS_PER_MINUTE = 10;

type Next = (err?: unknown) => void;

/**
 * The authorization server under /oauth (oidc-provider through @fastify/middie), its RFC 8414
 * metadata at /.well-known/oauth-authorization-server/oauth, and the protected resource's RFC 9728
 * metadata at /.well-known/oauth-protected-resource/mcp/oauth. Nothing at the site root or
 * under /mcp: a client of /mcp that found OAuth metadata there would drop its configured key.
 */
export const oauthRoutes = fp(
  async function oauthRoutes(app: FastifyInstance, opts: { oauth: OAuthServer; limiter: Limiter }) {
    const { oauth, limiter } = opts;
    let callback: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
    const handle = (req: IncomingMessage, res: ServerResponse, next: Next) => {
      oauth
        .provider()
        .then((p) => {
          callback ??= p.callback() as (req: IncomingMessage, res: ServerResponse) => void;
          callback(req, res);
        })
        .catch(next);
    };

    // The library builds its links from the request: it is told the public URL's scheme and host
    // (never the Host a client sent) and the address Fastify judged (TRUST_PROXY), overwriting
    // whatever the client wrote in those headers.
    const issuer = new URL(oauth.urls.issuer);
    const served = (url: string) => url.startsWith('/oauth') || url.startsWith('/.well-known/oauth-authorization-server/oauth');
    // Before middie's hook: registrations are counted per address, as sign-ups are.
    app.addHook('onRequest', async (request, reply) => {
      if (!served(request.url)) return;
      const headers = request.raw.headers;
      headers['x-forwarded-host'] = issuer.host;
      headers['x-forwarded-proto'] = issuer.protocol.slice(0, -1);
      headers['x-forwarded-for'] = request.ip;
      // An authorization request that names no scope asks for `read` (docs/oauth.md); the library
      // would otherwise grant the resource nothing.
      const [path, query = ''] = request.raw.url!.split('?');
      if (path === '/oauth/auth' && request.method === 'GET' && !new URLSearchParams(query).has('scope')) {
        request.raw.url = `${path}?${query}${query ? '&' : ''}scope=read`;
      }
      if (request.method !== 'POST' || request.url.split('?')[0] !== '/oauth/reg') return;
      const limit = await limiter.hit(`oauth-reg:${request.ip}`, REGISTRATIONS_PER_MINUTE);
      if (limit.exceeded) {
        return reply
          .code(429)
          .header('retry-after', limit.retryAfterSeconds)
          .send({ error: 'rate_limited', error_description: 'Too many client registrations from this address. Retry later.' });
      }
    });

    await app.register(middie);
    app.use('/oauth', handle);
    app.use('/.well-known/oauth-authorization-server/oauth', (req: IncomingMessage, res: ServerResponse, next: Next) => {
      const path = (req.url ?? '/').split('?')[0];
      if ((req.method !== 'GET' && req.method !== 'HEAD') || (path !== '/' && path !== '')) return next();
      req.url = '/.well-known/openid-configuration';
      // The library finds its mount path in originalUrl; the document's links are under /oauth.
      (req as IncomingMessage & { originalUrl?: string }).originalUrl = `/oauth${req.url}`;
      handle(req, res, next);
    });

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
