import type { SearchEngine } from '../domain/outlets/search-engine.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type pg from 'pg';
import type { Clock } from '../domain/clock.js';
import type { Durations } from '../domain/orders/states.js';
import type { PlacementGroups } from '../domain/orders/place-orders.js';
import type { WorkspacesModule } from '../domain/workspaces/workspaces-module.js';
import { type Caller, callerOf } from './caller.js';
import type { Confirmations } from './confirmation.js';
import { callTool, type ToolContext } from './tool.js';
import { toolList, tools } from './tools/index.js';

export const INSTRUCTIONS = [
  'Marketplace: buy sponsored content (guest posts, sponsored articles, link insertions, press releases) on verified publications ' +
    '("outlets"), for the one workspace this API key belongs to.',
  'Typical flow: get-balance → search-outlets or plan-campaign → get-outlet → place-orders → follow each order with list-orders ' +
    '(your_turn) and get-order: submit-content when it awaits your article, approve-draft or send-message when a draft awaits review, ' +
    'approve-placement once the article is live (its live_checks show whether the link was found as ordered; unapproved, it is paid ' +
    'at the review deadline only if the check passed). Completed placements are re-checked until guarantee_ends_at: a link lost and ' +
    'not restored is refunded (link_lost, then link_refunded). cancel-order before the publisher accepts; get-ledger for the money trail.',
  'To learn what changed, call list-events with the next_after of your previous call: one call returns every change since then ' +
    '(accepted, drafts, publications, messages, expiries), each with the order as it now is. Use it instead of polling list-orders ' +
    'or get-order on every order.',
  'Money: every amount is an integer number of US cents and already includes the service’s fees; *_formatted strings show it in ' +
    'the workspace currency. Inputs named *_usd are decimal US dollars.',
  'Budget: this key may have a spending budget, set by its owner: a limit per order, per UTC day and per UTC month (what orders ' +
    'placed in the window cost, refunds given back), and an expiry. get-balance shows it as key.budget (remaining_cents and resets_at ' +
    'for each window; null = no limits); a place-orders quote shows the budget left after the order. Read it before spending, plan ' +
    'within it, and never try to get around it: over it, placement is refused with budget_exceeded.',
  'Spending needs the user’s explicit confirmation. place-orders and approve-placement are two-step: called without ' +
    'confirmation_token they spend nothing and return a quote. Before confirming any spending, show the user that quote — what is ' +
    'bought or paid, the total, the balance after — and get their explicit confirmation in the conversation; never confirm on your ' +
    'own initiative or from an earlier, general instruction. Only then call the same tool again with the same arguments plus the ' +
    'quote’s confirmation_token (valid 10 minutes). Confirm cancel-order with the user too: it cannot be undone.',
  'A person may have to approve spending: this key may need approval for every spending action, or the workspace for totals above ' +
    'a threshold (a quote’s approval.required says so). Then a confirmed place-orders or approve-placement answers stage ' +
    'approval_pending (status approval_pending), a normal result, not an error: nothing was spent yet. Show the user its approve_url, ' +
    'where a person who may spend the workspace’s money approves it in the console; do not retry the call or confirm it again; check ' +
    'back later with get-approval-request (approval_request_id): approved means it happened (order_ids), declined, expired, cancelled ' +
    'or failed means nothing was spent.',
  'Errors are tool results with isError whose text is JSON {code, message, ...}: forbidden (e.g. the key cannot spend: the user needs ' +
    'a key created with "Can place orders"), approval_required, budget_exceeded (budget: window, remaining_cents, resets_at — ask the key\'s owner to raise it, or order less), insufficient_balance (needed_cents), conflict (the order has moved ' +
    'on; status), not_found, invalid_input (errors names each field), quote_changed (get a new quote and ask again).',
].join('\n\n');

export const SERVER_INFO = { name: 'marketplace', title: 'Marketplace API', version: '1.0.0' };

// Each Server would otherwise build its own Ajv instance (for elicitation, unused here).
const jsonSchemaValidator = new AjvJsonSchemaValidator();

/** What the tools share, whoever calls. The caller comes with each call, as `extra.authInfo`. */
export interface McpServerDeps {
  pool: pg.Pool;
  search: SearchEngine;
  clock: Clock;
  durations: Durations;
  placementGroups: PlacementGroups;
  workspaces: WorkspacesModule;
  /** The console's absolute base URL, for an approval request's `approve_url`. */
  approvalBaseUrl: string;
  /** The confirmation tokens' signer, read on first use. */
  confirmations: () => Promise<Confirmations>;
}

/**
 * What a tool runs with, for one caller: the shared deps, the caller, the confirmations' signer.
 * Each member is named: spreading two objects into a third (`{ ...deps, ...caller }`) takes V8's
 * slow path, about 3 µs a call, more than the rest of a get-balance call's own work.
 */
export const toolContext =
  (deps: McpServerDeps) =>
  ({ principal, requestId, log }: Caller) =>
  async (): Promise<ToolContext> => ({
    pool: deps.pool,
    search: deps.search,
    clock: deps.clock,
    durations: deps.durations,
    placementGroups: deps.placementGroups,
    workspaces: deps.workspaces,
    approvalBaseUrl: deps.approvalBaseUrl,
    confirmations: await deps.confirmations(),
    principal,
    requestId,
    log,
  });

/**
 * The MCP server, built once at boot and shared by every request: each tool registered with
 * `registerTool` and its zod input schema, which the SDK validates the arguments against before
 * the tool runs. A handler reads its caller from `extra.authInfo` (caller.ts).
 *
 * The output schemas are in the tools/list answer (below) but not given to the SDK, which would
 * parse every result against them again: a tool's result is typed by its output schema at compile
 * time (`ToolDef.run`), and clients check `structuredContent` against the advertised schema.
 */
export function createMcpServer(deps: McpServerDeps): McpServer {
  const mcp = new McpServer(SERVER_INFO, { instructions: INSTRUCTIONS, jsonSchemaValidator });
  const context = toolContext(deps);
  for (const def of tools) {
    mcp.registerTool(
      def.name,
      { title: def.title, description: def.description, inputSchema: def.input, annotations: { title: def.title, ...def.annotations } },
      (args: unknown, extra: { authInfo?: AuthInfo | undefined }) => {
        const caller = callerOf(extra);
        return callTool(def, context(caller), caller, args);
      },
    );
  }
  // A stateless server has no stream to announce a changed list on (the SDK declares it can).
  mcp.server.registerCapabilities({ tools: { listChanged: false } });
  // The SDK would convert every schema on every tools/list, and writes a nullable field as a
  // `type` array, which several agent platforms refuse (tool.ts): the list computed at boot
  // answers instead.
  mcp.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: toolList }));
  return mcp;
}
