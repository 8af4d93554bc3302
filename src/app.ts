import type { Server, ServerOptions } from 'node:http';
import Fastify, { type FastifyBaseLogger, type FastifyHttpOptions, type FastifyInstance, LogController } from 'fastify';
import fp from 'fastify-plugin';
import sensible from '@fastify/sensible';
import { validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { type Config, consoleBaseUrl, mailFrom, oauthBase } from './config.js';
import type { Database } from './db/client.js';
import { type Clock, systemClock } from './domain/clock.js';
import { createCatalogModule } from './domain/catalog/catalog-module.js';
import { DomainError, invalidInput } from './domain/errors.js';
import { refuseUnstorableText } from './domain/text-input.js';
import { useInputMessages } from './domain/input-messages.js';
import { KeyResolver } from './domain/keys/key-resolver.js';
import { catalogClientErrorBody, catalogNotFoundRenderer, renderFrameworkError } from './http/catalog/errors.js';
import { BODY_LIMITS } from './http/body-limits.js';
import { catalogRoutes } from './http/catalog/index.js';
import { opsRoutes } from './http/ops.js';
import { frontDoor } from './http/front-door.js';
import { searchEnginePlugin } from './http/plugins/search-engine.js';
import { placementGroupsPlugin } from './http/plugins/placement-groups.js';
import { workspacesPlugin } from './http/plugins/workspaces.js';
import { bearerAuth, createAuthService } from './http/plugins/auth.js';
import { clientErrorHandler, errorHandling } from './http/plugins/errors.js';
import { jsonBody } from './http/plugins/json-body.js';
import { badlyEncodedNames, parseQueryString } from './http/plugins/query-string.js';
import { logWhenSent, requestLogging } from './http/plugins/logging.js';
import { type RequestCounters, requestMetrics } from './http/plugins/metrics.js';
import { openApi } from './http/plugins/openapi.js';
import { createLimiter } from './http/plugins/rate-limit.js';
import { genReqId } from './http/plugins/request-id.js';
import { idempotencyKeyCheck } from './http/plugins/idempotency.js';
import { deadlineSweeper } from './workers/deadline-sweeper.js';
import { linkCheckWorker } from './workers/link-check-worker.js';
import { outboundPolicyFor } from './domain/orders/configured-checker.js';
import { linkCheckerPlugin } from './http/plugins/link-checker.js';
import { eventWorker } from './workers/event-worker.js';
import { mailWorker } from './workers/mail-worker.js';
import { notificationWorker } from './workers/notification-worker.js';
import { loggingTransport } from './domain/mail/deliver.js';
import { createSmtpTransport } from './outbound/smtp.js';
import { createOutboundClient } from './outbound/http-client.js';
import { durationsFrom } from './domain/orders/states.js';
import { v1Routes } from './http/v1/index.js';
import { mcpRoutes } from './http/mcp.js';
import { consoleApp } from './console/index.js';
import { createBilling } from './domain/billing/billing-deps.js';
import { webhookSecretBox } from './domain/webhooks/secret-box.js';
import { oauthUrls } from './http/oauth/provider.js';
import { oauthRoutes } from './http/oauth/routes.js';
import { createOAuthServer } from './http/oauth/server.js';
import { setPasswordCost } from './domain/users/passwords.js';

/** What the app is built from: the infrastructure it runs on, and the clock it reads. */
export interface AppDeps {
  config: Config;
  database: Database;
  clock?: Clock;
  redis?: Redis;
  metrics?: RequestCounters;
}

/** Node's own request deadlines, which Fastify has no option for. */
function httpServerOptions(config: Config): ServerOptions {
  const requestTimeout = config.HTTP_REQUEST_TIMEOUT_MS;
  // Node refuses a headers timeout longer than the request timeout.
  const headersTimeout = Math.min(config.HTTP_HEADERS_TIMEOUT_MS, requestTimeout);
  // Node enforces both only when it sweeps its connections, every 30 s by default: sweep at a
  // quarter of the headers timeout, so a deadline is overrun by at most a quarter of it.
  const connectionsCheckingInterval = Math.max(100, Math.min(30_000, Math.floor(headersTimeout / 4)));
  return { requestTimeout, headersTimeout, connectionsCheckingInterval };
}

/**
 * Every query parameter of the buyer API takes one value (`?page=1&page=2` says which is wrong),
 * written as percent-encoded UTF-8 (`?q=%ED%A0%80` names q rather than searching for its text).
 */
function refuseBadQuery(query: unknown): void {
  if (!query || typeof query !== 'object') return;
  const undecodable = badlyEncodedNames(query);
  if (undecodable) throw invalidInput(Object.fromEntries(undecodable.map((k) => [k, ['is not valid percent-encoded UTF-8']])));
  const repeated = Object.entries(query).filter(([, v]) => Array.isArray(v));
  if (repeated.length) throw invalidInput(Object.fromEntries(repeated.map(([k]) => [k, ['is given more than once']])));
}

/**
 * The Fastify instance's own options (they cannot be set by a plugin): logging, request ids,
 * body limit, deadlines for slow clients, proxies, routing and the errors raised before a route.
 */
export function serverOptions(config: Config, logger: Logger): FastifyHttpOptions<Server> {
  return {
    loggerInstance: logger as FastifyBaseLogger,
    // One line per request is written by http/plugins/logging.ts instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    genReqId,
    requestIdHeader: false,
    // Routes that take an article raise it (http/body-limits.ts); the seller API lowers it.
    bodyLimit: BODY_LIMITS.standard,
    // Slow or hostile clients (docs/http.md, "Slow clients"; HTTP_*_TIMEOUT_MS).
    connectionTimeout: config.HTTP_CONNECTION_TIMEOUT_MS,
    keepAliveTimeout: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    requestTimeout: config.HTTP_REQUEST_TIMEOUT_MS,
    http: httpServerOptions(config),
    // TRUST_PROXY: behind a reverse proxy, request.ip (the per-IP limits) is the real client's.
    trustProxy: config.TRUST_PROXY,
    // While closing, requests on open keep-alive sockets get the documented 503 (hook below).
    return503OnClosing: false,
    routerOptions: { ignoreTrailingSlash: true, querystringParser: parseQueryString },
    // Router errors (malformed percent-encoding in the path) in the documented shapes, not Fastify's,
    // with their log line: no hook runs for them.
    frameworkErrors: (error, request, reply) => {
      logWhenSent(request, reply);
      renderFrameworkError(error, request, reply);
    },
    // Errors before any request exists (a deadline passed while headers or body trickled in).
    clientErrorHandler: clientErrorHandler(catalogClientErrorBody, logger),
    // Starting the embedded PostgreSQL (initdb on a first start) and migrating take as long as
    // they take; their own timeouts bound them.
    pluginTimeout: 0,
  };
}

/** The whole service as a plugin: server.ts registers it beside the infrastructure, tests through buildApp. */
export const marketplaceApp = fp(
  async function marketplaceApp(instance: FastifyInstance, deps: AppDeps) {
    useInputMessages();
    setPasswordCost({ memoryKiB: deps.config.PASSWORD_HASH_MEMORY_KIB, passes: deps.config.PASSWORD_HASH_PASSES });
    const app = instance.withTypeProvider<ZodTypeProvider>();
    const clock = deps.clock ?? systemClock;
    const durations = durationsFrom(deps.config);
    const outboundPolicy = outboundPolicyFor(deps.config);

    // Every zod-validated part (body, query, params) is first searched for strings PostgreSQL cannot
    // store; the seller API's routes validate their own parameters.
    app.setValidatorCompiler((route) => {
      const validate = validatorCompiler(route as Parameters<typeof validatorCompiler>[0]);
      return (data: unknown) => {
        try {
          if (route.httpPart === 'querystring') refuseBadQuery(data);
          refuseUnstorableText(data, route.httpPart ?? 'input');
        } catch (error) {
          return { error: error as Error };
        }
        return validate(data);
      };
    });
    // Responses are documented by zod schemas but serialised without re-validation on the hot path;
    // the test suite checks responses against the same schemas.
    app.setSerializerCompiler(() => (data) => JSON.stringify(data));

    let closing = false;
    app.addHook('preClose', async () => {
      closing = true;
    });
    app.addHook('onRequest', async (request, reply) => {
      reply.header('x-request-id', request.id);
      if (closing) {
        reply.header('connection', 'close');
        throw new DomainError('unavailable', 'The server is shutting down. Retry on another connection.');
      }
    });

    await app.register(sensible);
    await app.register(requestLogging);
    if (deps.metrics) await app.register(requestMetrics, { metrics: deps.metrics });
    // Unknown paths under the seller API's prefixes answer in its shape (and 405 for a known path).
    await app.register(errorHandling, { notFoundRenderer: catalogNotFoundRenderer });
    await app.register(jsonBody);
    await app.register(openApi, { serverUrl: deps.config.PUBLIC_BASE_URL, secure: deps.config.PUBLIC_BASE_URL?.startsWith('https:') ?? false });

    const resolver = new KeyResolver(deps.database.pool, clock, (err) => app.log.warn({ err }, 'last_used_at update failed'));
    const limiter = createLimiter(deps.redis, deps.config.REDIS_KEY_PREFIX);
    const auth = createAuthService({
      resolver,
      limiter,
      clock,
      perKeyPerMinute: deps.config.RATE_LIMIT_PER_MINUTE,
      unknownPerIpPerMinute: deps.config.UNKNOWN_KEY_RATE_LIMIT_PER_MINUTE,
    });
    await app.register(bearerAuth, { auth });
    await app.register(idempotencyKeyCheck);

    // Outlet search: one engine per process (its index loads now), used by REST, MCP and the planner.
    await app.register(searchEnginePlugin, { pool: deps.database.pool, resolver });
    await app.register(opsRoutes, { pool: deps.database.pool, searchReady: () => app.searchReady() });
    await app.register(frontDoor);
    // One settings cache and balance reader, and one line of placements, for REST, MCP and the console.
    await app.register(workspacesPlugin, { pool: deps.database.pool, clock });
    await app.register(placementGroupsPlugin, { pool: deps.database.pool, clock, durations });
    const catalog = createCatalogModule({
      pool: deps.database.pool,
      clock,
      ...(deps.redis ? { redis: deps.redis } : {}),
      redisPrefix: deps.config.REDIS_KEY_PREFIX,
    });
    await app.register(catalogRoutes, { catalog, auth });
    await app.register(linkCheckerPlugin, { config: deps.config, pool: deps.database.pool, clock });
    const { linkChecker } = app;
    // One box for the webhook signing secrets: the routes seal them, the event worker opens them.
    const webhookSecrets = webhookSecretBox(deps.database.pool, deps.config.SECRETS_KEY);
    // Adding funds (docs/billing.md): the provider and the limits, made from the settings, for the API and the console.
    const billing = createBilling(deps.database.pool, clock, deps.config, webhookSecrets);
    await app.register(v1Routes, {
      prefix: '/api/v1',
      pool: deps.database.pool,
      search: app.searchEngine,
      workspaces: app.workspaces,
      placementGroups: app.placementGroups,
      publicBaseUrl: deps.config.PUBLIC_BASE_URL,
      approvalBaseUrl: consoleBaseUrl(deps.config),
      clock,
      durations,
      outboundPolicy,
      linkChecker,
      limiter,
      webhookSecrets,
      billing,
    });
    // OAuth for agents (docs/oauth.md): every URL of it is built from PUBLIC_BASE_URL, or on a
    // loopback HOST from HOST and PORT, never from a request's Host; elsewhere without it there is none.
    let oauth: ReturnType<typeof createOAuthServer> | undefined;
    const oauthAt = oauthBase(deps.config);
    if ('url' in oauthAt) {
      const outbound = createOutboundClient(outboundPolicy);
      app.addHook('onClose', async () => outbound.close());
      oauth = createOAuthServer({
        urls: oauthUrls(oauthAt.url),
        pool: deps.database.pool,
        outbound,
        resolver,
        onServerError: (err) => app.log.error({ err }, 'OAuth server error'),
      });
      await app.register(oauthRoutes, { oauth, limiter });
    } else {
      app.log.warn(`OAuth is off until PUBLIC_BASE_URL is set (${oauthAt.off}): /mcp/oauth answers 404`);
    }
    await app.register(mcpRoutes, {
      oauth: oauth && { principalFor: oauth.principalFor, resourceMetadata: oauth.urls.resourceMetadata },
      auth,
      pool: deps.database.pool,
      search: app.searchEngine,
      clock,
      durations,
      placementGroups: app.placementGroups,
      workspaces: app.workspaces,
      approvalBaseUrl: consoleBaseUrl(deps.config),
      confirmationSecret: deps.config.MCP_CONFIRMATION_SECRET,
    });
    await app.register(deadlineSweeper, {
      pool: deps.database.pool,
      clock,
      durations,
      intervalMs: deps.config.ORDER_SWEEP_INTERVAL_MS,
      eventRetentionDays: deps.config.EVENT_RETENTION_DAYS,
      approvalBaseUrl: consoleBaseUrl(deps.config),
      oauthUnusedClientHours: deps.config.OAUTH_UNUSED_CLIENT_HOURS,
      site: { baseUrl: consoleBaseUrl(deps.config) },
      digestHourUtc: deps.config.NOTIFICATION_DIGEST_HOUR,
    });
    await app.register(eventWorker, {
      pool: deps.database.pool,
      clock,
      intervalMs: deps.config.EVENTS_POLL_INTERVAL_MS,
      client: createOutboundClient(outboundPolicy),
      delivery: {
        timeoutMs: deps.config.WEBHOOK_TIMEOUT_MS,
        retryBaseMs: deps.config.WEBHOOK_RETRY_BASE_MS,
        disableAfterMs: deps.config.WEBHOOK_DISABLE_AFTER_HOURS * 3_600_000,
      },
      secrets: webhookSecrets,
    });

    // Mail (docs/mail.md): over SMTP, or without SMTP_URL one log line per mail, links included.
    if (!deps.config.SMTP_URL) app.log.warn('SMTP_URL is not set: mails are written to this log instead of sent (docs/mail.md)');
    // Notifications from the event feed (docs/mail.md), queued into the outbox the mail worker sends.
    await app.register(notificationWorker, {
      pool: deps.database.pool,
      clock,
      intervalMs: deps.config.MAIL_POLL_INTERVAL_MS,
      site: { baseUrl: consoleBaseUrl(deps.config) },
    });
    await app.register(mailWorker, {
      pool: deps.database.pool,
      clock,
      intervalMs: deps.config.MAIL_POLL_INTERVAL_MS,
      transport: deps.config.SMTP_URL
        ? createSmtpTransport({ url: deps.config.SMTP_URL, from: mailFrom(deps.config), timeoutMs: deps.config.MAIL_TIMEOUT_MS })
        : loggingTransport((line) => app.log.info(line)),
      settings: {
        timeoutMs: deps.config.MAIL_TIMEOUT_MS,
        retryBaseMs: deps.config.MAIL_RETRY_BASE_MS,
        giveUpMs: deps.config.MAIL_GIVE_UP_HOURS * 3_600_000,
      },
    });

    await app.register(consoleApp, {
      prefix: '/app',
      pool: deps.database.pool,
      clock,
      config: deps.config,
      workspaces: app.workspaces,
      durations,
      linkChecker,
      placementGroups: app.placementGroups,
      search: app.searchEngine,
      webhookSecrets,
      billing,
      ...(deps.redis ? { redis: deps.redis } : {}),
      ...(oauth ? { oauth: oauth.interactions } : {}),
    });

    await app.register(linkCheckWorker, { checker: linkChecker, intervalMs: deps.config.LINK_CHECK_POLL_MS });

    app.addHook('onClose', async () => {
      resolver.clear();
    });
  },
  { name: 'marketplace-app' },
);

/** A Fastify instance holding the app, on infrastructure the caller made and closes (tests). */
export async function buildApp(deps: AppDeps & { logger: Logger }) {
  const app = Fastify(serverOptions(deps.config, deps.logger)).withTypeProvider<ZodTypeProvider>();
  await app.register(marketplaceApp, deps);
  return app;
}
