import { z } from 'zod';
import { approvalActions, approvalStatuses } from '../common/enums.js';
import { offerFormat } from '../domain/outlets/enums.js';
import { pageQuery } from './pagination.js';

const cents = (what: string) => z.number().int().describe(`${what}, in US cents (fees included).`);

export const approvalItem = z.object({
  offer_id: z.number().int(),
  order_id: z.number().int().nullable().describe('approve_placement: the order whose live placement would be paid; null for an order not yet placed.'),
  outlet: z.object({ id: z.number().int(), name: z.string(), domain: z.string() }),
  format: offerFormat,
  title: z.string().describe("The offer's title."),
  price: cents('What this item costs'),
  price_formatted: z.string(),
  target_url: z.string(),
  anchor_text: z.string().nullable(),
  live_url: z.string().nullable().describe('approve_placement: where the placement is live, for the person to check.'),
});

export const approvalRequest = z
  .object({
    id: z.number().int(),
    status: z
      .enum(approvalStatuses)
      .describe(
        'pending: waiting for a person; approved: a person approved and the action ran (order_ids); declined: a person said no (decline_reason); ' +
          'expired: nobody decided by expires_at; cancelled: a key of the workspace withdrew it; failed: a person approved but the action was refused then (failure).',
      ),
    action: z.enum(approvalActions).describe('place_orders: POST /api/v1/orders (the MCP tool place-orders); approve_placement: POST /api/v1/orders/{id}/approve.'),
    total_cents: cents('What approving spends (place_orders: from the available balance; approve_placement: from escrow, to the publisher)'),
    total_formatted: z.string(),
    items: z.array(approvalItem).describe('What would be bought or paid, as checked when the key asked. Approving checks everything again.'),
    requested_by: z.object({
      key_id: z.number().int(),
      key_name: z.string(),
      kind: z.enum(['key', 'oauth_app']).describe('key: an API key; oauth_app: an app a person connected with OAuth.'),
    }),
    requested_at: z.string(),
    expires_at: z.string().describe('After this nobody can approve it (APPROVAL_REQUEST_HOURS after it was made).'),
    approve_url: z.string().describe("The console's page of this request, where a signed-in person approves or declines it: show it to the user."),
    decided_by: z.object({ user_id: z.number().int(), name: z.string() }).nullable().describe('The person who approved or declined it.'),
    decided_at: z.string().nullable(),
    decline_reason: z.string().nullable(),
    order_ids: z.array(z.number().int()).describe('approved: the orders placed (place_orders) or the order paid (approve_placement); empty otherwise.'),
    failure: z
      .object({ code: z.string(), message: z.string() })
      .nullable()
      .describe('failed: the refusal the action met when a person approved it (an offer gone inactive, the key revoked, …).'),
  })
  .meta({ id: 'ApprovalRequest', description: "A key's spending action waiting for, or decided by, a person (docs/approvals.md)." });

export const approvalListQuery = z.strictObject({
  ...pageQuery,
  status: z.enum(approvalStatuses).optional().describe('Only requests in this status.'),
});
