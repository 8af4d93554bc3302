import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { InitializeRequestSchema, JSONRPCRequestSchema, ListToolsRequestSchema, PingRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type pg from 'pg';
import { MCP_SECRET_NAME } from '../db/migrate.js';
import type { Clock } from '../domain/clock.js';
import type { Durations } from '../domain/orders/states.js';
import type { WorkspaceSettingsCache } from '../domain/workspaces/settings-cache.js';
import { createConfirmations } from '../mcp/confirmation.js';
import { buildMcpServer } from '../mcp/server.js';
import { type AuthService, workspacePrincipal } from './plugins/auth.js';
import { type ErrorRenderer, renderV1Error } from './plugins/errors.js';
import { BODY_LIMITS } from './body-limits.js';

export interface McpRouteDeps {
  auth: AuthService;
  pool: pg.Pool;
  clock: Clock;
  durations: Durations;
  settings: WorkspaceSettingsCache;
  /** MCP_CONFIRMATION_SECRET; when unset, the secret generated into app_secrets at migration. */
  confirmationSecret: string | undefined;
}

const jsonRpcError = (code: number, message: string) => ({ jsonrpc: '2.0', error: { code, message }, id: null });

// Authentication, rate limiting and body limits answer in Interface A's shape (docs/http.md);
// a body that is not JSON is a transport problem, answered as JSON-RPC does (-32700).
const renderMcpError: ErrorRenderer = (request, reply, error) =>
  error.code === 'bad_request' ? reply.code(400).send(jsonRpcError(-32700, `Parse error: ${error.message}`)) : renderV1Error(request, reply, error);

// The headers the streamable HTTP transport reads (content negotiation, protocol version,
// session, resumption). Others stay out of the SDK's objects: the bearer key above all.
const TRANSPORT_HEADERS = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'] as const;

/**
 * The request as the transport reads it: method, URL and the headers above (the body is already
 * parsed). Built here rather than by the SDK's Node wrapper, whose conversion of a Node request
 * and reply to web ones cost more CPU than the tool call itself.
 */
function webRequest(request: FastifyRequest): Request {
  const headers: [string, string][] = [];
  for (const name of TRANSPORT_HEADERS) {
    const value = request.headers[name];
    if (value !== undefined) headers.push([name, Array.isArray(value) ? value.join(', ') : value]);
  }
  // The transport does not read the URL; a fixed one cannot fail on whatever the Host header says.
  return new Request('http://localhost/mcp', { method: 'POST', headers });
}

// The requests this server answers, with the SDK's own schemas for them. The SDK answers params
// that fail these schemas with -32603 Internal error and zod's issue list as the message; JSON-RPC
// says -32602 Invalid params, so they are checked here first.
type Issue = { path: PropertyKey[]; message: string };
const requestSchemas = new Map<string, { safeParse(v: unknown): { success: boolean; error?: { issues: Issue[] } } }>([
  ['initialize', InitializeRequestSchema],
  ['ping', PingRequestSchema],
  ['tools/list', ListToolsRequestSchema],
]);

const isJsonRpcRequest = (m: unknown): boolean =>
  !!m && typeof m === 'object' && typeof (m as { method?: unknown }).method === 'string' && (m as { id?: unknown }).id !== undefined;

const describeIssue = (issue: Issue) => `Invalid params: ${issue.path.length ? issue.path.map(String).join('.') : 'params'}: ${issue.message}`;

/**
 * A request's `_meta` as the transport checks it, for every method: one that fails there makes
 * the transport refuse the whole body (every request of a batch) as a parse error. Checked only
 * when a request sends one, which the hot path does not.
 */
function invalidMeta(request: object): string | undefined {
  const { params } = request as { params?: unknown };
  if (!params || typeof params !== 'object' || (params as { _meta?: unknown })._meta === undefined) return undefined;
  const issue = JSONRPCRequestSchema.safeParse(request).error?.issues.find((i) => i.path[0] === 'params');
  return issue && describeIssue(issue);
}

/** Why a single request's params are unusable, or undefined when they are fine (or it is no request). */
function invalidParams(body: unknown): string | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const { method, params } = body as { method?: unknown; params?: unknown };
  const badMeta = isJsonRpcRequest(body) ? invalidMeta(body) : undefined;
  if (badMeta) return badMeta;
  if (method === 'tools/call') {
    // The hot path, checked by hand: the tool validates its own arguments.
    if (!params || typeof params !== 'object' || Array.isArray(params)) return 'Invalid params: params must be an object with a tool name.';
    const { name, arguments: args } = params as { name?: unknown; arguments?: unknown };
    if (typeof name !== 'string') return 'Invalid params: params.name must be the name of a tool.';
    if (args !== undefined && (args === null || typeof args !== 'object' || Array.isArray(args))) {
      return 'Invalid params: params.arguments must be an object.';
    }
    return undefined;
  }
  const schema = typeof method === 'string' ? requestSchemas.get(method) : undefined;
  const issue = schema?.safeParse({ method, params }).error?.issues[0];
  return issue && describeIssue(issue);
}

/**
 * A body's requests with malformed params, answered as -32602 errors, and what remains for the
 * SDK (undefined when nothing does). A body that is not a batch is forwarded or refused whole.
 */
function splitMalformed(body: unknown): { forward: unknown; refused: object[] } {
  const refusal = (m: unknown, message: string) => ({ jsonrpc: '2.0', error: { code: -32602, message }, id: (m as { id?: unknown }).id ?? null });
  if (!Array.isArray(body)) {
    const bad = invalidParams(body);
    return bad ? { forward: undefined, refused: [refusal(body, bad)] } : { forward: body, refused: [] };
  }
  const refused: object[] = [];
  const forward = body.filter((m) => {
    const bad = invalidParams(m);
    if (bad) refused.push(refusal(m, bad));
    return !bad;
  });
  return { forward: forward.length || !refused.length ? forward : undefined, refused };
}

async function readSecret(pool: pg.Pool): Promise<string> {
  const { rows } = await pool.query<{ value: string }>('SELECT value FROM app_secrets WHERE name = $1', [MCP_SECRET_NAME]);
  if (!rows[0]) throw new Error(`No ${MCP_SECRET_NAME} in app_secrets: run the migrations (npm start does) or set MCP_CONFIRMATION_SECRET.`);
  return rows[0].value;
}

/**
 * POST /mcp: the MCP tool server over stateless streamable HTTP (docs/mcp.md). The bearer
 * hook has already authenticated the workspace key (a publisher key is a 401) and counted the
 * request in the key's rate-limit bucket, shared with REST. Each request gets its own server and
 * transport, built for that key.
 */
export const mcpRoutes: FastifyPluginAsync<McpRouteDeps> = async (app, deps) => {
  // Read once, on the first MCP request (so starting the app needs no query); every process reads
  // the same row, so any process confirms any quote. A failed read is retried on the next request.
  let confirmations: Promise<ReturnType<typeof createConfirmations>> | undefined;
  const getConfirmations = () => {
    confirmations ??= (deps.confirmationSecret ? Promise.resolve(deps.confirmationSecret) : readSecret(deps.pool))
      .then((secret) => createConfirmations(secret, deps.clock))
      .catch((err: unknown) => {
        confirmations = undefined;
        throw err;
      });
    return confirmations;
  };
  const config = { auth: 'buyer-or-401' as const, renderError: renderMcpError };

  app.post('/mcp', { config, bodyLimit: BODY_LIMITS.content, schema: { hide: true } }, async (request, reply) => {
    // JSON-RPC says malformed params are -32602; the SDK would answer -32603 with zod's text. In a
    // batch, the malformed requests are answered here and the others go on to the SDK.
    // A batch is as many requests as it holds: the bearer hook counted one, the rest count here,
    // before any of them runs (notifications and responses get no answer and are not counted).
    const requests = Array.isArray(request.body) ? request.body.filter(isJsonRpcRequest).length : 0;
    if (requests > 1) await deps.auth.chargeMore(reply, workspacePrincipal(request), requests - 1);
    const { forward, refused } = splitMalformed(request.body);
    if (refused.length && !forward) return reply.code(200).send(Array.isArray(request.body) ? refused : refused[0]);
    const confirmations = await getConfirmations();
    const server = buildMcpServer({
      principal: workspacePrincipal(request),
      pool: deps.pool,
      clock: deps.clock,
      durations: deps.durations,
      settings: deps.settings,
      confirmations,
      log: request.log,
      requestId: request.id,
    });
    const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
    let response: Response;
    try {
      await server.connect(transport);
      // With JSON responses the transport answers once every reply is ready: the exchange is
      // over, and the server and transport hold no stream, timer or socket. They are dropped with
      // the request rather than closed: closing would only abort the finished handlers, an
      // exception object each.
      response = await transport.handleRequest(webRequest(request), { parsedBody: forward });
    } catch (err) {
      request.log.error({ err }, 'MCP request failed');
      return reply.code(500).send(jsonRpcError(-32603, 'Internal error'));
    }
    const text = response.body ? await response.text() : undefined;
    if (refused.length && response.ok) {
      // The SDK's answers (none when it got only notifications: 202) with the refusals.
      const answered: unknown = text ? JSON.parse(text) : [];
      return reply.code(200).send([...(Array.isArray(answered) ? answered : [answered]), ...refused]);
    }
    reply.code(response.status);
    response.headers.forEach((value, name) => void reply.header(name, value));
    return reply.send(text);
  });

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
};
