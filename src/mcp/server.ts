import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { JsonRpcError } from './errors.js';
import { callTool, type ToolContext } from './tool.js';
import { toolList, toolsByName } from './tools/index.js';

export const INSTRUCTIONS = [
  'Marketplace: buy sponsored content (guest posts, sponsored articles, link insertions, press releases) on verified publications ' +
    '("outlets"), for the one workspace this API key belongs to.',
  'Typical flow: get-balance → search-outlets or plan-campaign → get-outlet → place-orders → follow each order with list-orders ' +
    '(your_turn) and get-order: submit-content when it awaits your article, approve-draft or send-message when a draft awaits review, ' +
    'approve-placement once the article is live. cancel-order before the publisher accepts; get-ledger for the money trail.',
  'To learn what changed, call list-events with the next_after of your previous call: one call returns every change since then ' +
    '(accepted, drafts, publications, messages, expiries), each with the order as it now is. Use it instead of polling list-orders ' +
    'or get-order on every order.',
  'Money: every amount is an integer number of US cents and already includes the service’s fees; *_formatted strings show it in ' +
    'the workspace currency. Inputs named *_usd are decimal US dollars.',
  'Spending needs the user’s explicit confirmation. place-orders and approve-placement are two-step: called without ' +
    'confirmation_token they spend nothing and return a quote. Before confirming any spending, show the user that quote — what is ' +
    'bought or paid, the total, the balance after — and get their explicit confirmation in the conversation; never confirm on your ' +
    'own initiative or from an earlier, general instruction. Only then call the same tool again with the same arguments plus the ' +
    'quote’s confirmation_token (valid 10 minutes). Confirm cancel-order with the user too: it cannot be undone.',
  'Errors are tool results with isError whose text is JSON {code, message, ...}: forbidden (e.g. the key cannot spend: the user needs ' +
    'a key created with "Can place orders"), approval_required, insufficient_balance (needed_cents), conflict (the order has moved ' +
    'on; status), not_found, invalid_input (errors names each field), quote_changed (get a new quote and ask again).',
].join('\n\n');

export const SERVER_INFO = { name: 'marketplace', title: 'Marketplace API', version: '1.0.0' };

// Each Server would otherwise build its own Ajv instance (for elicitation, unused here), which
// cost more CPU than the rest of a tools/call together.
const jsonSchemaValidator = new AjvJsonSchemaValidator();

/**
 * An MCP server for one request, acting for the caller in `ctx` (stateless: built per request,
 * dropped with it). The low-level Server is used rather than McpServer so that argument errors
 * come back as invalid_input naming each field, like every other tool error (McpServer validates
 * arguments itself and answers plain text), and so the tools/list answer is computed once per
 * process instead of on every call.
 */
export function buildMcpServer(ctx: ToolContext): Server {
  const server = new Server(SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS, jsonSchemaValidator });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: toolList }));
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const tool = toolsByName.get(request.params.name);
    if (!tool) throw new JsonRpcError(ErrorCode.InvalidParams, `Unknown tool ${JSON.stringify(request.params.name)}; tools/list names them.`);
    return callTool(tool, ctx, request.params.arguments);
  });
  return server;
}
