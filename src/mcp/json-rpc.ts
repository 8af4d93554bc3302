import { InitializeRequestSchema, JSONRPCRequestSchema, ListToolsRequestSchema, PingRequestSchema } from '@modelcontextprotocol/sdk/types.js';

export const jsonRpcError = (code: number, message: string) => ({ jsonrpc: '2.0' as const, error: { code, message }, id: null });

// The requests this server answers, with the SDK's own schemas for them. The SDK answers params
// that fail these schemas with -32603 Internal error and zod's issue list as the message; JSON-RPC
// says -32602 Invalid params, so they are checked before the SDK sees them.
type Issue = { path: PropertyKey[]; message: string };
const requestSchemas = new Map<string, { safeParse(v: unknown): { success: boolean; error?: { issues: Issue[] } } }>([
  ['initialize', InitializeRequestSchema],
  ['ping', PingRequestSchema],
  ['tools/list', ListToolsRequestSchema],
]);

/** A JSON-RPC request (it has a method and an id), as opposed to a notification or a response. */
export const isJsonRpcRequest = (m: unknown): boolean =>
  !!m && typeof m === 'object' && typeof (m as { method?: unknown }).method === 'string' && (m as { id?: unknown }).id !== undefined;

const describeIssue = (issue: Issue) => `Invalid params: ${issue.path.length ? issue.path.map(String).join('.') : 'params'}: ${issue.message}`;

/**
 * A request's `_meta` as the SDK's message schema checks it, for every method: one that fails
 * there would make the whole body (every request of a batch) a parse error. Checked only when a
 * request sends one, which the hot path does not.
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
    // The hot path, checked by hand: the SDK validates the arguments against the tool's schema.
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
export function splitMalformed(body: unknown): { forward: unknown; refused: object[] } {
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
