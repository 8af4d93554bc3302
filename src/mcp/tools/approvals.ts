import { z } from 'zod';
import { getApproval } from '../../domain/approvals/approval-read.js';
import { approvalRequest } from '../../schemas/approvals.js';
import { annotations, defineTool, idArg } from '../tool.js';

export const getApprovalRequest = defineTool({
  name: 'get-approval-request',
  title: 'Get an approval request',
  description:
    "One approval request of the workspace, as it is now: what a confirmed place-orders or approve-placement waits for when a person " +
    'must approve it first (stage approval_pending). status: pending (show approve_url to the user again if needed), approved (the ' +
    'action ran: order_ids name the orders placed or the order paid; follow them with get-order), declined (decline_reason), expired, ' +
    'cancelled or failed (failure): nothing was spent. Free. Another workspace\'s request is not_found.',
  input: z.strictObject({
    approval_request_id: idArg('The approval request id: approval_request.id of an approval_pending result.'),
  }),
  output: z.object({ approval_request: approvalRequest }),
  annotations: annotations.read,
  run: async (ctx, { approval_request_id }) => ({
    approval_request: await getApproval(ctx.pool, ctx.principal.workspaceId, approval_request_id, { now: ctx.clock.now(), baseUrl: ctx.approvalBaseUrl }),
  }),
});
