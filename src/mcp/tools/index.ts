import { describeTool, type ToolDef } from '../tool.js';
import { getApprovalRequest } from './approvals.js';
import { listEvents } from './events.js';
import { approveDraft, cancelOrder, getOrder, listOrders, sendMessage, submitContent } from './orders.js';
import { getOutlet, searchOutlets } from './outlets.js';
import { planCampaign } from './planning.js';
import { approvePlacement, placeOrders } from './spending.js';
import { getBalance, getLedger } from './workspace.js';

/** Every tool, in the order tools/list shows them: roughly the order an agent uses them. */
export const tools: readonly ToolDef[] = [
  getBalance,
  searchOutlets,
  getOutlet,
  planCampaign,
  placeOrders,
  listOrders,
  getOrder,
  listEvents,
  submitContent,
  approveDraft,
  sendMessage,
  approvePlacement,
  getApprovalRequest,
  cancelOrder,
  getLedger,
];

export const toolsByName: ReadonlyMap<string, ToolDef> = new Map(tools.map((t) => [t.name, t]));

/** The tools/list answer, computed once per process. */
export const toolList = tools.map(describeTool);
