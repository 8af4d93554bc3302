import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { lazyConfirmations } from '../mcp/confirmation-secret.js';
import { createMcpEndpoint } from '../mcp/endpoint.js';
import { isJsonRpcRequest, jsonRpcError } from '../mcp/json-rpc.js';
import type { WorkspacePrincipal } from '../domain/keys/principal.js';
import { DomainError } from '../domain/errors.js';
import { type AuthService, bearerToken, oneAuthorization, workspacePrincipal } from './plugins/auth.js';
import { type ErrorRenderer, renderV1Error, v1ErrorBody } from './plugins/errors.js';
import { BODY_LIMITS } from './body-limits.js';
import type { Services } from '../domain/services/services.js';

export interface McpRouteDeps extends Pick<Services, 'pool' | 'search' | 'clock' | 'durations' | 'placementGroups' | 'workspaces' | 'approvalBaseUrl'> {
  auth: AuthService;
  /** MCP_CONFIRMATION_SECRET; when unset, the secret generated into app_secrets at migration. */
  confirmationSecret: string | undefined;
  /** The OAuth-authorized twin at /mcp/oauth (docs/oauth.md); absent when OAuth is off (`oauthBase` in config.ts). */
  oauth?: McpOAuth | undefined;
}

export interface McpOAuth {
  /** The workspace principal an access token stands for, or null. */
  principalFor(token: string): Promise<WorkspacePrincipal | null>;
  /** RFC 9728 metadata URL named in the 401's WWW-Authenticate. */
  resourceMetadata: string;
}

// Authentication, rate limiting and body limits answer in the buyer API's shape (docs/http.md);
// a body that is not JSON is a transport problem, answered as JSON-RPC does (-32700).
const renderMcpError: ErrorRenderer = (request, reply, error) =>
  error.code === 'bad_request' ? reply.code(400).send(jsonRpcError(-32700, `Parse error: ${error.message}`)) : renderV1Error(request, reply, error);

const header = (value: string | string[] | undefined) => (Array.isArray(value) ? value.join(', ') : value);

/**
 * POST /mcp: the MCP tool server over stateless streamable HTTP (docs/mcp.md). The bearer
 * hook has already authenticated the workspace key (a publisher key is a 401) and counted the
 * request in the key's rate-limit bucket, shared with REST. One server and transport, built
 * here at boot, answer every request; the caller travels with its messages.
 */
const mcpEndpointRoutes: FastifyPluginAsync<McpRouteDeps> = async (app, deps) => {
  const endpoint = await createMcpEndpoint({
    pool: deps.pool,
    search: deps.search,
    clock: deps.clock,
    durations: deps.durations,
    placementGroups: deps.placementGroups,
    workspaces: deps.workspaces,
    approvalBaseUrl: deps.approvalBaseUrl,
    confirmations: lazyConfirmations(deps.confirmationSecret, deps.pool, deps.clock),
  }, app.log);
  app.addHook('onClose', () => endpoint.close());
  const config = { auth: 'buyer-or-401' as const, renderError: renderMcpError };

  const answer = async (request: FastifyRequest, reply: FastifyReply, principal: WorkspacePrincipal) => {
    // A batch is as many requests as it holds: the bearer hook counted one, the rest count here,
    // before any of them runs (notifications and responses get no answer and are not counted).
    const requests = Array.isArray(request.body) ? request.body.filter(isJsonRpcRequest).length : 0;
    if (requests > 1) await deps.auth.chargeMore(reply, principal, requests - 1);
    const { headers } = request;
    let answered;
    try {
      answered = await endpoint.answer(
        request.body,
        { accept: header(headers.accept), contentType: header(headers['content-type']), protocolVersion: header(headers['mcp-protocol-version']) },
        { principal, requestId: request.id, log: request.log },
      );
    } catch (err) {
      request.log.error({ err }, 'MCP request failed');
      return reply.code(500).send(jsonRpcError(-32603, 'Internal error'));
    }
    // The header Fastify gives the JSON it writes itself.
    if (answered.json !== undefined) return reply.code(answered.status).type('application/json; charset=utf-8').send(answered.json);
    return reply.code(answered.status).send(answered.body);
  };

  app.post('/mcp', { config, bodyLimit: BODY_LIMITS.content, schema: { hide: true } }, async (request, reply) => answer(request, reply, workspacePrincipal(request)));

  // Stateless: no server-to-client stream to open (GET) and no session to end (DELETE); other
  // methods get the same 405 the SDK would give (OPTIONS too: no CORS preflight is answered).
  app.route({
    method: ['GET', 'DELETE', 'PUT', 'PATCH', 'OPTIONS'],
    url: '/mcp',
    config,
    schema: { hide: true },
    handler: async (_request, reply) =>
      reply.code(405).header('allow', 'POST').send(jsonRpcError(-32000, 'Method not allowed: this MCP endpoint is stateless; send JSON-RPC with POST.')),
  });

  if (deps.oauth) mcpOAuthRoutes(app, deps.oauth, deps.auth, answer);
};

/**
 * POST /mcp/oauth: the same tools, authorized by an OAuth access token for this resource instead
 * of an API key. A request without a valid one gets 401 with the RFC 9728 challenge, from which
 * an MCP client discovers where to get one. Rate limits count per grant, as per key.
 */
function mcpOAuthRoutes(
  app: Parameters<FastifyPluginAsync>[0],
  oauth: McpOAuth,
  auth: AuthService,
  answer: (request: FastifyRequest, reply: FastifyReply, principal: WorkspacePrincipal) => Promise<unknown>,
) {
  const challenge = (error?: string) =>
    `Bearer resource_metadata="${oauth.resourceMetadata}", scope="read spend"${error ? `, error="${error}"` : ''}`;
  const renderError: ErrorRenderer = (request, reply, error) => {
    if (error.code !== 'unauthenticated') return renderMcpError(request, reply, error);
    const sentToken = bearerToken(oneAuthorization(request)) !== undefined;
    return reply.code(401).header('www-authenticate', challenge(sentToken ? 'invalid_token' : undefined)).send(v1ErrorBody(request, error));
  };
  const config = { auth: 'public' as const, renderError };
  app.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.url !== '/mcp/oauth') return;
    const token = bearerToken(oneAuthorization(request));
    const principal = token === undefined ? null : await oauth.principalFor(token);
    await auth.count(request, reply, principal);
    if (!principal) {
      throw new DomainError('unauthenticated', 'Missing, unknown, expired or revoked access token, or one for another resource. Get one through OAuth (see WWW-Authenticate).');
    }
    request.principal = principal;
  });
  app.post('/mcp/oauth', { config, bodyLimit: BODY_LIMITS.content, schema: { hide: true } }, async (request, reply) => {
    return answer(request, reply, request.principal as WorkspacePrincipal);
  });
  app.route({
    method: ['GET', 'DELETE', 'PUT', 'PATCH', 'OPTIONS'],
    url: '/mcp/oauth',
    config,
    schema: { hide: true },
    handler: async (_request, reply) =>
      reply.code(405).header('allow', 'POST').send(jsonRpcError(-32000, 'Method not allowed: this MCP endpoint is stateless; send JSON-RPC with POST.')),
  });
}

/** The MCP routes, encapsulated; the app's plugins whose objects the tools are handed come first. */
export const mcpRoutes = fp(mcpEndpointRoutes, { name: 'mcp-routes', encapsulate: true, dependencies: ['search-engine', 'workspaces', 'placement-groups'] });
