import { z } from 'zod';
import { csvColumns } from './csv.js';
import { httpUrl } from '../domain/http-url.js';
import { offerFormat } from '../domain/outlets/enums.js';
import { MAX_OFFERS_PER_REQUEST } from '../domain/orders/placement-rules.js';
import { orderStatuses } from '../domain/orders/states.js';
import { liveCheckNames } from '../domain/placements/live-checks.js';
import { pageQuery } from './pagination.js';
import { boolQuery } from './outlets.js';

export const placeOrdersBody = z
  .strictObject({
    offer_ids: z
      .array(z.number({ error: 'must be an integer offer id' }).int('must be an integer offer id').positive('must be a positive id').max(2_147_483_647), {
        error: (issue) => (issue.input === undefined ? 'is required' : 'must be an array of offer ids'),
      })
      .min(1, 'must name at least one offer')
      .max(MAX_OFFERS_PER_REQUEST, `at most ${MAX_OFFERS_PER_REQUEST} offers per request`)
      .refine((ids) => new Set(ids).size === ids.length, 'must not repeat an offer')
      .describe('Offers to buy, one order each (from GET /outlets/{id} or a plan’s offer_ids).'),
    target_url: httpUrl.describe('The page the placement links to.'),
    anchor_text: z.string().trim().min(1).max(200).optional().describe('The link text you want.'),
    brief: z.string().max(10_000).optional().describe('Instructions for the publisher.'),
    content: z.string().min(1).max(200_000).optional().describe('Your own article in Markdown; needs content_title.'),
    // As on POST /orders/{id}/content: a title outside 10–120 characters is a failed title_length
    // check the publisher sees, not a refusal (checks never block).
    content_title: z
      .string()
      .trim()
      .min(1, 'is required')
      .max(300)
      .optional()
      .describe('Title of your article, up to 300 characters (the title_length check wants 10–120); needs content.'),
    project_id: z.number().int().positive().max(2_147_483_647).optional().describe('A project of this workspace to file the orders under.'),
  })
  .superRefine((b, ctx) => {
    if (b.content !== undefined && b.content_title === undefined) ctx.addIssue({ code: 'custom', path: ['content_title'], message: 'is required with content' });
    if (b.content_title !== undefined && b.content === undefined) ctx.addIssue({ code: 'custom', path: ['content'], message: 'is required with content_title' });
  });

export const contentBody = z.strictObject({
  title: z.string().trim().min(1, 'is required').max(300),
  body: z.string().min(1, 'is required').max(200_000).describe('Markdown.'),
});

export const messageBody = z.strictObject({ body: z.string().trim().min(1, 'is required').max(5000) });
export const declineBody = z.strictObject({ reason: z.string().trim().min(1, 'is required').max(1000) });
export const publishBody = z.strictObject({ live_url: httpUrl.describe('Where the placement is live: on the outlet’s domain or a subdomain.') });
/** Body-less actions accept nothing, an empty body, or {}; any field is refused, as in every body. */
export const emptyBody = z.strictObject({}).nullish();

export const orderListQuery = z.strictObject({
  status: z.enum(orderStatuses).optional(),
  your_turn: boolQuery()
    .optional()
    .describe('Only orders waiting on you (true) or on the other side / finished (false).'),
  ...pageQuery,
});

const check = z.object({
  name: z.enum(['target_link', 'anchor_text', 'word_count', 'link_count', 'title_length', 'markdown_safe']),
  status: z.enum(['pass', 'warn', 'fail']),
  detail: z.string(),
}).meta({ id: 'ContentCheck' });

const liveCheck = z.object({
  name: z.enum(liveCheckNames).describe('What was checked (docs/link-checks.md).'),
  status: z.enum(['pass', 'warn', 'fail']),
  detail: z.string(),
}).meta({ id: 'LiveCheck' });

export const messageSchema = z.object({
  id: z.number().int(),
  body: z.string(),
  author: z.enum(['buyer', 'publisher']),
  created_at: z.string(),
}).meta({ id: 'OrderMessage' });

const orderCommon = {
  id: z.number().int(),
  status: z.enum(orderStatuses).describe("link_lost and link_refunded are this service's, beyond the specification: the link guarantee (docs/link-guarantee.md)."),
  turn: z.enum(['buyer', 'publisher']).nullable().describe('Whose move it is; null once finished.'),
  your_turn: z.boolean(),
  outlet: z.object({ id: z.number().int(), name: z.string(), domain: z.string() }),
  offer: z.object({ id: z.number().int(), format: offerFormat, title: z.string() }),
  target_url: z.string(),
  anchor_text: z.string().nullable(),
  brief: z.string().nullable(),
  deadlines: z
    .object({
      respond_by: z.string().nullable(),
      deliver_by: z.string().nullable(),
      review_by: z.string().nullable(),
      restore_by: z.string().nullable().describe('link_lost only: the publisher restores the link by then, or the buyer is refunded.'),
    })
    .describe("Only the current state's deadline is set."),
  live_url: z.string().nullable(),
  live_checks: z
    .array(liveCheck)
    .describe('The last check of the live page (docs/link-checks.md); [] until the first check after publishing has finished.'),
  live_checked_at: z.string().nullable().describe('When live_checks were made; null before the first check.'),
  guarantee_ends_at: z
    .string()
    .nullable()
    .describe('Completed placements: until then the link is re-checked, and a lost link not restored is refunded (docs/link-guarantee.md).'),
  content: z
    .object({
      title: z.string(),
      body: z.string(),
      version: z.number().int(),
      submitted_by: z.enum(['buyer', 'publisher']),
      submitted_at: z.string(),
      checks: z.array(check),
    })
    .nullable()
    .describe('The latest version, with its checks; failing checks do not block anything.'),
  decline_reason: z.string().nullable(),
  messages: z.array(messageSchema).optional().describe('Single-order reads only: the last 100, oldest first.'),
  messages_count: z.number().int().optional().describe('Lists only.'),
  created_at: z.string(),
  updated_at: z.string(),
};

export const buyerOrder = z.object({
  ...orderCommon,
  price: z.number().int().describe('US cents, fees included, frozen at placement.'),
  price_formatted: z.string(),
  project_id: z.number().int().nullable(),
}).meta({ id: 'Order', description: 'One order, as its buyer sees it.' });

export const publisherOrder = z.object({
  ...orderCommon,
  payout_cents: z.number().int().describe('What the publisher is paid on approval, frozen at placement.'),
  payout_formatted: z.string(),
}).meta({ id: 'PublisherOrder', description: 'One order, as the publisher selling it sees it.' });

/** The CSV export's columns (Accept: text/csv on the order lists): the list's JSON fields. */
export const buyerOrderCsvColumns = csvColumns(buyerOrder, ['messages']);
export const publisherOrderCsvColumns = csvColumns(publisherOrder, ['messages']);
