import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { getApproval, listApprovals } from '../../domain/approvals/approval-read.js';
import type { ApprovalDeps } from '../../domain/approvals/ask.js';
import { approvalRequests } from '../../domain/approvals/decide.js';
import { workspacePrincipal } from '../plugins/auth.js';
import { onceFor, sendKept } from '../plugins/idempotency.js';
import { authErrors, bearerSecurity, errorResponses } from '../../schemas/common.js';
import { approvalListQuery, approvalRequest } from '../../schemas/approvals.js';
import { emptyBody } from '../../schemas/orders.js';
import { idParam } from '../../schemas/outlets.js';
import { pageEnvelope, paginated } from '../../schemas/pagination.js';

/**
 * A key's spending actions that wait for a person (docs/approvals.md): any key of the workspace
 * reads them and may withdraw one; only a person decides, in the console.
 */
export const approvalRoutes: FastifyPluginAsyncZod<ApprovalDeps & { publicBaseUrl: string | undefined }> = async (app, deps) => {
  const { pool, clock, baseUrl, publicBaseUrl } = deps;
  const tags = ['Approval requests'];

  app.get(
    '/approval-requests',
    {
      schema: {
        operationId: 'listApprovalRequests',
        summary: "The workspace's approval requests: pending ones first (the next to expire first), then the others, newest first.",
        tags,
        security: bearerSecurity,
        querystring: approvalListQuery,
        response: { 200: paginated(approvalRequest), ...errorResponses(...authErrors, 422) },
      },
    },
    async (request) => {
      const { page, per_page, status } = request.query;
      const { workspaceId } = workspacePrincipal(request);
      const { items, total } = await listApprovals(pool, workspaceId, { status }, page, per_page, { now: clock.now(), baseUrl });
      return { data: items, ...pageEnvelope(request, publicBaseUrl, { page, perPage: per_page, total, count: items.length }) };
    },
  );

  app.get(
    '/approval-requests/:id',
    {
      schema: {
        operationId: 'getApprovalRequest',
        summary: 'One approval request: its status, and once approved the orders it placed (order_ids).',
        tags,
        security: bearerSecurity,
        params: idParam,
        response: { 200: z.object({ data: approvalRequest }), ...errorResponses(...authErrors, 404, 422) },
      },
    },
    async (request) => ({ data: await getApproval(pool, workspacePrincipal(request).workspaceId, request.params.id, { now: clock.now(), baseUrl }) }),
  );

  app.post(
    '/approval-requests/:id/cancel',
    {
      config: { idempotency: 'optional' },
      schema: {
        operationId: 'cancelApprovalRequest',
        summary: 'Withdraw a pending approval request (pending → cancelled); nobody can approve it any more.',
        tags,
        security: bearerSecurity,
        params: idParam,
        body: emptyBody,
        response: { 200: z.object({ data: approvalRequest }), ...errorResponses(...authErrors, 400, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const kept = await approvalRequests.cancel(deps, workspacePrincipal(request), request.params.id, onceFor(request));
      return sendKept(request, reply, kept, 200);
    },
  );
};
