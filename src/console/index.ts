import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import view from '@fastify/view';
import { Eta } from 'eta';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { countPending } from '../domain/approvals/approval-read.js';
import { DomainError } from '../domain/errors.js';
import { createFailureLimiter } from '../domain/limits/failure-limiter.js';
import { consoleCsrfKey } from '../domain/sessions/csrf-key.js';
import { createSessionStore } from '../domain/sessions/session-store.js';
import { projectRoot } from '../paths.js';
import type { ConsoleDeps, ConsoleTarget } from './context.js';
import { renderConsoleError } from './errors.js';
import { approvalRulePages } from './pages/approval-rules.js';
import { approvalPages } from './pages/approvals.js';
import { accountLinkPages } from './pages/account-links.js';
import { type AuthLimits, authPages } from './pages/auth.js';
import { invitationPages } from './pages/invitations.js';
import { keyPages } from './pages/keys.js';
import { memberPages } from './pages/members.js';
import { orderActionPages } from './pages/order-actions.js';
import { orderPages } from './pages/orders.js';
import { placeOrderPages } from './pages/place-order.js';
import { webhookPages } from './pages/webhooks.js';
import { overviewPages } from './pages/overview.js';
import { oauthConsentPages } from './pages/oauth-consent.js';
import { connectedAppPages } from './pages/connected-apps.js';
import { fundsPages } from './pages/funds.js';
import { paperPages } from './pages/papers.js';
import { payoutPages } from './pages/payouts.js';
import { opsPages } from './pages/ops.js';
import { CSRF_COOKIE, csrfUserInfo } from './cookies.js';
import { isSecure, signedInGate } from './session.js';
import { notificationPages, unsubscribePages } from './pages/notifications.js';

const consoleDir = join(projectRoot, 'src', 'console');

/** Helmet's headers with a content security policy that allows no inline script: the console's only script is a file. */
export function consoleHelmet(secure: boolean) {
  return {
    contentSecurityPolicy: {
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        objectSrc: ["'none'"],
        baseUri: ["'self'"],
        upgradeInsecureRequests: secure ? [] : null,
      },
    },
    // Helmet sends HSTS only where it belongs: on an https site.
    strictTransportSecurity: secure,
  };
}

const assets: Record<string, { type: string; body: string }> = {
  'console.css': { type: 'text/css; charset=utf-8', body: readFileSync(join(consoleDir, 'assets', 'console.css'), 'utf8') },
  'console.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(join(consoleDir, 'assets', 'console.js'), 'utf8') },
  'favicon.svg': { type: 'image/svg+xml', body: readFileSync(join(consoleDir, 'assets', 'favicon.svg'), 'utf8') },
  'invoice.css': { type: 'text/css; charset=utf-8', body: readFileSync(join(consoleDir, 'assets', 'invoice.css'), 'utf8') },
};

/**
 * The console under /app: HTML rendered on the server, forms that work without JavaScript.
 * Registered by app.ts with the prefix /app, encapsulated: its form parser, cookies, CSRF,
 * security headers and error pages apply to its routes only.
 */
async function consoleRoutes(app: FastifyInstance, deps: ConsoleDeps) {
  const secure = isSecure(deps);
  // Console routes carry no API key (bearer auth skips them) and are not in the OpenAPI document.
  app.addHook('onRoute', (route) => {
    route.config = { ...(route.config ?? {}), auth: 'public' };
    route.schema = { ...(route.schema ?? {}), hide: true };
  });
  app.decorateRequest('consoleUser', null);
  app.decorateRequest('consoleTargets', null as unknown as ConsoleTarget[]);
  app.decorateRequest('consoleTarget', null);
  app.decorateRequest('consolePendingApprovals', null);
  app.decorateRequest('consoleCsrfKey', '');
  app.addHook('onRequest', async (request) => {
    request.consoleTargets = [];
  });

  await app.register(formbody);
  await app.register(cookie);
  await app.register(helmet, consoleHelmet(secure));
  // The CSRF secret lives in its own HttpOnly cookie; every form carries a token made from it
  // (`_csrf`) and bound to the session (`csrfUserInfo`): a secret and token taken from one
  // browser are no good with another person's session cookie, or after a new sign-in.
  await app.register(csrf, {
    cookieKey: CSRF_COOKIE,
    cookieOpts: { path: '/app', httpOnly: true, sameSite: 'lax', secure },
    getUserInfo: csrfUserInfo,
    // The binding is keyed in csrfUserInfo, with the stored key; the library asks for a key of
    // its own too, which then needs no secrecy (every process must use the same one).
    csrfOpts: { hmacKey: 'console-csrf' },
  });
  // The binding's key, read on the first console request rather than at start (the app starts
  // while the database is away), after the cookies are parsed (an error page needs them); the
  // assets need none.
  const csrfKey = consoleCsrfKey(deps.pool);
  app.addHook('onRequest', async (request) => {
    if (!request.url.startsWith('/app/assets/')) request.consoleCsrfKey = await csrfKey();
  });
  await app.register(view, {
    engine: { eta: new Eta({ autoEscape: true, cache: true }) },
    root: join(consoleDir, 'views'),
    layout: 'layout.eta',
    viewExt: 'eta',
    production: true,
  });

  app.setErrorHandler(renderConsoleError);
  app.setNotFoundHandler(async (request, reply) => renderConsoleError(new DomainError('not_found', 'There is no such page.'), request, reply));
  // Every state-changing request (all of them are form posts) needs its token.
  app.addHook('preHandler', async (request, reply) => {
    // A request no route takes (another method on a form's path) is answered 404 by the
    // not-found handler, not "form expired".
    if (request.method === 'GET' || request.method === 'HEAD' || request.is404) return;
    if (request.routeOptions.config?.formToken === false) return;
    await new Promise<void>((resolve, reject) => {
      app.csrfProtection(request, reply, (err?: Error) => (err ? reject(err) : resolve()));
    });
  });
  // Pages are personal: no shared cache keeps them.
  app.addHook('onSend', async (request, reply) => {
    if (!reply.hasHeader('cache-control') && !request.url.startsWith('/app/assets/')) reply.header('cache-control', 'private, no-cache');
  });

  app.get('/assets/:file', async (request, reply) => {
    const asset = assets[(request.params as { file: string }).file];
    if (!asset) return reply.callNotFound();
    return reply.type(asset.type).header('cache-control', 'public, max-age=300').send(asset.body);
  });

  const sessions = createSessionStore(deps.pool, deps.clock);
  const redis = deps.redis ? { redis: deps.redis, prefix: deps.config.REDIS_KEY_PREFIX } : {};
  const limits: AuthLimits = {
    perAccountAddress: createFailureLimiter({ name: 'signin-account-address', points: deps.config.SIGNIN_FAILURES_PER_ACCOUNT, windowSeconds: 15 * 60, ...redis }),
    perAddress: createFailureLimiter({ name: 'signin-address', points: deps.config.SIGNIN_FAILURES_PER_ADDRESS, windowSeconds: 15 * 60, ...redis }),
    perAccount: createFailureLimiter({ name: 'signin-account', points: deps.config.SIGNIN_FAILURES_PER_ACCOUNT, windowSeconds: 15 * 60, ...redis }),
    // One attempt per window; each window's length is set by the attempt that opens it.
    accountTurns: createFailureLimiter({ name: 'signin-account-turn', points: 1, windowSeconds: 1, ...redis }),
    maxWaitSeconds: deps.config.SIGNIN_SLOWDOWN_MAX_SECONDS,
    signUps: createFailureLimiter({ name: 'signup-address', points: deps.config.SIGNUPS_PER_ADDRESS_PER_HOUR, windowSeconds: 3600, ...redis }),
    // Each "Send again" is a mail to the person's address: five an hour is plenty for a lost one.
    resends: createFailureLimiter({ name: 'verify-resend', points: 5, windowSeconds: 3600, ...redis }),
  };
  // Invitations per workspace or publisher account, counted as sent (docs/people.md).
  const invitations = createFailureLimiter({ name: 'invitations-target', points: deps.config.INVITATIONS_PER_WORKSPACE_PER_DAY, windowSeconds: 86_400, ...redis });
  await app.register(authPages, { deps, sessions, limits });
  await app.register(invitationPages, { deps, sessions, limits });
  await app.register(accountLinkPages, { deps, sessions, limits });
  await app.register(unsubscribePages, { deps });

  // Everything below needs a signed-in person: one gate for all of it.
  await app.register(async (signedIn) => {
    signedIn.addHook('onRequest', signedInGate(deps, sessions));
    await signedIn.register(oauthConsentPages, { deps });
    // The operations console: staff only (docs/billing.md).
    await signedIn.register(opsPages, { deps, prefix: '/ops' });
    for (const prefix of ['/w/:targetId', '/p/:targetId']) {
      await signedIn.register(
        async (target) => {
          // The navigation's count of approval requests waiting: one query, made only when a
          // workspace's page is rendered (a redirect after a form makes none).
          target.addHook('onRequest', async (request) => {
            const t = request.consoleTarget;
            if (t?.kind === 'workspace') request.consolePendingApprovals = () => countPending(deps.pool, t.id, deps.clock.now());
          });
          await target.register(overviewPages, { deps });
          await target.register(keyPages, { deps });
          await target.register(memberPages, { deps, invitations });
          await target.register(approvalRulePages, { deps });
          await target.register(webhookPages, { deps });
          await target.register(orderPages, { deps });
          await target.register(orderActionPages, { deps });
          await target.register(placeOrderPages, { deps });
          await target.register(approvalPages, { deps });
          await target.register(connectedAppPages, { deps });
          await target.register(notificationPages, { deps });
          await target.register(fundsPages, { deps });
          await target.register(paperPages, { deps });
          await target.register(payoutPages, { deps });
        },
        { prefix },
      );
    }
  });
}

/** The console, encapsulated; what it is handed from the app's own plugins must be registered first. */
export const consoleApp = fp(consoleRoutes, {
  name: 'console',
  encapsulate: true,
  dependencies: ['search-engine', 'workspaces', 'placement-groups', 'link-checker'],
});
