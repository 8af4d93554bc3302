import type { CallToolResult, JSONRPCMessage, JSONRPCRequest, TextContent } from '@modelcontextprotocol/sdk/types.js';
import type { Caller } from './caller.js';
import type { JsonRpcReply } from './json-transport.js';
import { callTool, sdkRefusal, type ToolContext } from './tool.js';
import { toolsByName } from './tools/index.js';

/**
 * A tools/call request whose params are a tool's name and its arguments, nothing else: what
 * clients send. One with `_meta` (a progress token, a related task) or a `task` goes to the SDK,
 * which knows what those ask for.
 */
export function isPlainToolCall(message: JSONRPCMessage): message is JSONRPCRequest {
  if (!('method' in message) || message.method !== 'tools/call' || !('id' in message)) return false;
  for (const key in message.params) if (key !== 'name' && key !== 'arguments') return false;
  return true;
}

/**
 * Answers a plain tools/call as the SDK's McpServer does, with the same reply (members in the same
 * order), in this server's own terms (endpoint.ts, `inDocumentedTerms`): the tool found by name
 * (unknown: -32602), its arguments parsed by its input schema (refused: invalid_input, as
 * `sdkRefusal` words it), then `callTool`.
 *
 * Why not through the SDK: each call there is parsed by zod five more times (the message as each
 * kind of message, the request twice, the result once more), gets an AbortController, closures and
 * a chain of promises, and an id of the shared transport's own, for a call whose params were
 * already checked here (json-rpc.ts): in the endpoint alone 31 µs a get-balance against 13 µs here,
 * and twice `GET /api/v1/me`'s Node CPU under load (bench/RESULTS.md, "MCP"). Every other request
 * (initialize, ping, tools/list, notifications, a call with `_meta`) still goes to the SDK.
 */
export async function answerToolCall(request: JSONRPCRequest, caller: Caller, context: () => Promise<ToolContext>): Promise<JsonRpcReply> {
  const { name, arguments: args } = request.params as { name: string; arguments?: Record<string, unknown> };
  const def = toolsByName.get(name);
  if (!def) return { jsonrpc: '2.0', id: request.id, error: { code: -32602, message: `Unknown tool ${JSON.stringify(name)}; tools/list names them.` } };
  // Synchronously, as `sdkRefusal` parses them too: no tool's input schema has an async check.
  const parsed = def.input.safeParse(args ?? {});
  if (!parsed.success) return { jsonrpc: '2.0', id: request.id, result: sdkRefusal(def, caller, args, 'Input validation error') };
  const result = await callTool(def, context, caller, parsed.data);
  return { result: result.isError ? asSdkWritesIt(result) : result, jsonrpc: '2.0', id: request.id };
}

/**
 * A reply of `answerToolCall` as JSON, the very bytes `JSON.stringify(reply)` writes, with the
 * tool's data stringified once instead of twice: a result's text is its structuredContent as JSON
 * (`callTool`), so that text is written as the structuredContent too. A tool error or a JSON-RPC
 * error is stringified whole. For get-balance this saves about 6 µs of the endpoint's 25
 * (bench/RESULTS.md, "MCP"); a test holds it to JSON.stringify's bytes.
 */
export function replyJson(reply: JsonRpcReply): string {
  if (!('result' in reply) || reply.result.isError || reply.result.structuredContent === undefined) return JSON.stringify(reply);
  const { text } = (reply.result as CallToolResult).content[0] as TextContent;
  return `{"result":{"content":[{"type":"text","text":${JSON.stringify(text)}}],"structuredContent":${text}},"jsonrpc":"2.0","id":${JSON.stringify(reply.id)}}`;
}

/** A tool error's members in the order of the SDK's result schema, which the SDK's reply follows. */
const asSdkWritesIt = ({ content, isError }: CallToolResult): CallToolResult => ({ content, isError });
