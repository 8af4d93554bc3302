import type { Scenario } from './types.js';

// The MCP twin of the `me` scenario: the same read (get-balance is the data of GET /api/v1/me)
// through POST /mcp, so the difference is the cost of a stateless MCP request — a server and a
// transport built per request, JSON-RPC parsing, the result as text and structuredContent.
// Target: at least half of REST's requests/s. bench/run.ts judges against the ceilings only, so
// the target is stated against the one-query ceiling: `me` targets 0.9 of it, half of that is
// 0.45. Run both in the same run to compare them directly: `npm run bench -- me mcp`.
export const mcp: Scenario = {
  name: 'mcp',
  description: 'POST /mcp tools/call get-balance (stateless, JSON response) with the demo read-only key',
  requests: (ctx) => [
    {
      method: 'POST',
      path: '/mcp',
      headers: { authorization: `Bearer ${ctx.readOnlyKey}`, accept: 'application/json, text/event-stream' },
      json: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get-balance', arguments: {} } },
    },
  ],
  target: { ratio: 0.45, against: 'one-query' },
};
