import { mcpPost } from './mcp.js';
import type { Scenario } from './types.js';

// Beside the `mcp` scenario: a JSON-RPC `ping` through the same route, key check, rate limit, the
// shared SDK server and transport, with no tool and no database. A plain tools/call no longer goes
// through the SDK's protocol layer (src/mcp/tool-call.ts), so `mcp` may cost less than this:
// what `ping` costs beyond `me` is the POST and the SDK's own per-request work.
export const mcpPing: Scenario = {
  name: 'mcp-ping',
  description: 'POST /mcp ping (stateless, JSON response) with the demo read-only key: the SDK alone, no tool, no query',
  requests: (ctx) => [mcpPost(ctx, { jsonrpc: '2.0', id: 1, method: 'ping' })],
  target: { ratio: 0.5, against: { scenario: 'me' } },
  diagnostic: true,
};
