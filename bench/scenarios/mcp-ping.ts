import { mcpPost } from './mcp.js';
import type { Scenario } from './types.js';

// The floor under the `mcp` scenario: a JSON-RPC `ping` through the same route, key check, rate
// limit, the shared SDK server and transport, with no tool and no database. What `mcp` costs
// beyond it is the tool call (arguments, the query, the result as text and structuredContent);
// what it costs beyond `me` is the SDK's own per-request work.
export const mcpPing: Scenario = {
  name: 'mcp-ping',
  description: 'POST /mcp ping (stateless, JSON response) with the demo read-only key: the SDK alone, no tool, no query',
  requests: (ctx) => [mcpPost(ctx, { jsonrpc: '2.0', id: 1, method: 'ping' })],
  target: { ratio: 0.5, against: { scenario: 'me' } },
  diagnostic: true,
};
