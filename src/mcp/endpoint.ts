import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import { MAX_BATCH_SIZE } from '@modelcontextprotocol/sdk/server/requestBody.js';
import {
  type CallToolResult,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  type JSONRPCRequest,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import type { FastifyBaseLogger } from 'fastify';
import { type Caller, callerAuthInfo } from './caller.js';
import { jsonRpcError, splitMalformed } from './json-rpc.js';
import { isRequest, type JsonRpcReply, JsonTransport } from './json-transport.js';
import { createMcpServer, type McpServerDeps, toolContext } from './server.js';
import { sdkRefusal } from './tool.js';
import { answerToolCall, isPlainToolCall, replyJson } from './tool-call.js';
import { toolsByName } from './tools/index.js';

/** The headers of a POST the streamable HTTP transport reads. */
export interface McpHeaders {
  accept: string | undefined;
  contentType: string | undefined;
  protocolVersion: string | undefined;
}

/** What to answer over HTTP: a status and a JSON body (as a value, or already written as JSON), or no body (202). */
export interface McpAnswer {
  status: number;
  body?: unknown;
  json?: string;
}

export interface McpEndpoint {
  answer(body: unknown, headers: McpHeaders, caller: Caller): Promise<McpAnswer>;
  close(): Promise<void>;
}

const refuse = (status: number, code: number, message: string): McpAnswer => ({ status, body: jsonRpcError(code, message) });

/**
 * Stateless streamable HTTP in JSON-response mode, over the one server and transport built here
 * at boot: a POST's messages go to the server (a plain tools/call is answered without it:
 * tool-call.ts) and the replies come back as the HTTP answer. The
 * checks before are the ones the SDK's streamable HTTP transport makes, with its statuses and
 * messages (content negotiation, batch size, message shape, one initialize alone, protocol
 * version); there is no session to check.
 */
export async function createMcpEndpoint(deps: McpServerDeps, log: FastifyBaseLogger): Promise<McpEndpoint> {
  const server = createMcpServer(deps);
  // What the SDK reports out of band (a notification it could not handle, a reply it could not
  // send); every request still gets its reply.
  server.server.onerror = (err) => log.warn({ err }, 'MCP server reported an error');
  const transport = new JsonTransport();
  await server.connect(transport);
  const context = toolContext(deps);

  async function answer(body: unknown, headers: McpHeaders, caller: Caller): Promise<McpAnswer> {
    // JSON-RPC says malformed params are -32602; the SDK would answer -32603 with zod's text. In a
    // batch, the malformed requests are answered here and the others go on to the server.
    const { forward, refused } = splitMalformed(body);
    if (refused.length && forward === undefined) return { status: 200, body: Array.isArray(body) ? refused : refused[0] };

    const { accept, contentType, protocolVersion } = headers;
    if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) {
      return refuse(406, -32000, 'Not Acceptable: Client must accept both application/json and text/event-stream');
    }
    if (!isJsonContentType(contentType)) return refuse(415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
    // JSON-RPC 2.0 (section 6): an empty batch is answered with one Invalid Request error; the
    // SDK would read it as a body of notifications only and answer 202 with nothing.
    if (Array.isArray(forward) && forward.length === 0) return refuse(400, -32600, 'Invalid Request: Batch must hold at least one message');
    const raw = Array.isArray(forward) ? forward : [forward];
    if (raw.length > MAX_BATCH_SIZE) return refuse(400, -32600, `Invalid Request: Batch must not exceed ${MAX_BATCH_SIZE} messages`);
    const messages: JSONRPCMessage[] = [];
    for (const m of raw) {
      const parsed = JSONRPCMessageSchema.safeParse(m);
      if (!parsed.success) return refuse(400, -32700, 'Parse error: Invalid JSON-RPC message');
      messages.push(parsed.data);
    }
    // Malformed initialize requests were refused above: a request of that method is one.
    const initializes = messages.some((m) => isRequest(m) && m.method === 'initialize');
    if (initializes && messages.length > 1) return refuse(400, -32600, 'Invalid Request: Only one initialization request is allowed');
    if (!initializes && protocolVersion !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(protocolVersion)) {
      const supported = SUPPORTED_PROTOCOL_VERSIONS.join(', ');
      return refuse(400, -32000, `Bad Request: Unsupported protocol version: ${protocolVersion} (supported versions: ${supported})`);
    }

    // One plain tool call, what clients send nearly always: its reply is written as JSON here.
    const [only] = messages;
    if (messages.length === 1 && !refused.length && isPlainToolCall(only!)) {
      return { status: 200, json: replyJson(await answerToolCall(only, caller, context(caller))) };
    }
    // Plain tool calls are answered here (tool-call.ts), everything else by the SDK; the replies
    // keep the order of the requests.
    const toSdk = messages.filter((m) => !isPlainToolCall(m));
    const fromSdk = toSdk.length ? transport.exchange(toSdk, callerAuthInfo(caller)) : undefined;
    let sdkIndex = 0;
    const replies = await Promise.all(
      messages.filter(isRequest).map((request) => {
        if (isPlainToolCall(request)) return answerToolCall(request, caller, context(caller));
        const i = sdkIndex++;
        return fromSdk!.then((sdkReplies) => inDocumentedTerms(request, sdkReplies[i]!, caller));
      }),
    );
    if (refused.length) return { status: 200, body: [...replies, ...refused] };
    if (!replies.length) return { status: 202 };
    return { status: 200, body: replies.length === 1 ? replies[0] : replies };
  }

  return { answer, close: () => server.close() };
}

/**
 * A reply as this server's docs word it. The SDK answers a tools/call it refuses before
 * the tool runs (unknown tool, arguments that fail the schema) as a tool error holding its own
 * sentence, where every tool error here holds the JSON `{code, message, ...}` and an unknown tool
 * is a JSON-RPC error: those are reworded. Every other reply goes out as the SDK wrote it.
 */
function inDocumentedTerms(request: JSONRPCRequest, reply: JsonRpcReply, caller: Caller): JsonRpcReply {
  if (request.method !== 'tools/call' || !('result' in reply) || reply.result.isError !== true) return reply;
  const text = (reply.result as CallToolResult).content[0];
  if (text?.type !== 'text' || text.text.startsWith('{')) return reply;
  const { name, arguments: args } = request.params as { name: string; arguments?: unknown };
  const def = toolsByName.get(name);
  if (!def) return { jsonrpc: '2.0', id: reply.id, error: { code: -32602, message: `Unknown tool ${JSON.stringify(name)}; tools/list names them.` } };
  return { jsonrpc: '2.0', id: reply.id, result: sdkRefusal(def, caller, args, text.text) };
}
