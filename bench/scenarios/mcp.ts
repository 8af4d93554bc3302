import type { BenchContext, BenchRequest, Scenario } from './types.js';

/** One JSON-RPC message to /mcp with the demo read-only key, as an MCP client sends it. */
export const mcpPost = (ctx: BenchContext, message: object): BenchRequest => ({
  method: 'POST',
  path: '/mcp',
  headers: { authorization: `Bearer ${ctx.readOnlyKey}`, accept: 'application/json, text/event-stream' },
  json: message,
});

// The MCP twin of the `me` scenario: the same read (get-balance is the data of GET /api/v1/me)
// through POST /mcp, so the difference is the cost of a stateless MCP request — a POST body, the
// message checked (JSON-RPC message schema, the tool's arguments), the result as text and
// structuredContent. A plain tools/call skips the SDK's protocol layer (src/mcp/tool-call.ts).
// Target (issue 56): 0.8 of REST's requests/s, measured in the same round (`me` runs too).
export const mcp: Scenario = {
  name: 'mcp',
  description: 'POST /mcp tools/call get-balance (stateless, JSON response) with the demo read-only key',
  requests: (ctx) => [mcpPost(ctx, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get-balance', arguments: {} } })],
  target: { ratio: 0.8, against: { scenario: 'me' } },
};
