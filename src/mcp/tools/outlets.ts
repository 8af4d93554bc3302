import { z } from 'zod';
import { usdToCents } from '../../domain/money/format.js';
import { getOutlet as getOutletDetail } from '../../domain/outlets/outlet-detail.js';
import { outletSearchOf, searchOutlets as search } from '../../domain/outlets/search.js';
import { outletDetail, outletListItem, outletListQuery } from '../../schemas/outlets.js';
import { usdAmount } from '../../schemas/usd.js';
import { annotations, defineTool, idArg, pageArgs, pageMeta, pageMetaSchema } from '../tool.js';

// The REST query schema parses strings; tool arguments are typed JSON, so the numeric and boolean
// filters are declared as numbers and booleans here, with the REST names and meanings.
const q = outletListQuery.shape;

export const searchOutlets = defineTool({
  name: 'search-outlets',
  title: 'Search outlets',
  description:
    'Search verified publications (outlets) that sell sponsored content, with ranked full-text search (q) and filters. Each item has ' +
    'traffic (Google-verified or not), track record (with link survival at 30 and 60 days and the verification pass rate, which ' +
    'sort=link_survival and sort=verification rank by) and from_price: the cheapest matching offer in US cents, fees included. Free; buys ' +
    'nothing. Next: get-outlet for an outlet’s offers (their ids are what place-orders buys), or plan-campaign to pick offers for a goal ' +
    'and budget.',
  input: z.strictObject({
    q: q.q,
    type: q.type,
    format: q.format,
    country: q.country,
    language: q.language,
    topic: q.topic,
    max_price_usd: usdAmount()
      .optional()
      .describe('Only outlets with an active offer (of `format`, when given) costing at most this many US dollars, fees included.'),
    verified_traffic: z.boolean({ error: 'must be true or false' }).optional().describe('Only outlets whose traffic is (true) or is not (false) Google-verified.'),
    min_traffic: z
      .number({ error: 'must be an integer' })
      .int('must be an integer')
      .min(0, 'must not be negative')
      .max(999_999_999_999, 'is too large')
      .optional()
      .describe('Minimum monthly visits.'),
    sort: q.sort,
    ...pageArgs,
  }),
  output: z.object({ items: z.array(outletListItem), meta: pageMetaSchema }),
  annotations: annotations.read,
  run: async (ctx, { page, per_page, max_price_usd, ...params }) => {
    const s = outletSearchOf({ ...params, max_price_cents: max_price_usd === undefined ? undefined : usdToCents(max_price_usd) });
    const { items, total } = await search(ctx.search, ctx.pool, ctx.principal.workspaceId, s, page, per_page);
    return { items, meta: pageMeta(page, per_page, total, items.length) };
  },
});

export const getOutlet = defineTool({
  name: 'get-outlet',
  title: 'Get an outlet and its offers',
  description:
    'One outlet with every active offer: format, price (US cents, fees included), turnaround days, who writes the content ' +
    '(content_by: buyer means you must supply it, with place-orders content/content_title or later with submit-content), word and ' +
    'link limits, link type. Free; buys nothing. Next: place-orders with the chosen offer ids (it returns a quote first).',
  input: z.strictObject({ outlet_id: idArg('The outlet id, from search-outlets or a plan item.') }),
  output: z.object({ outlet: outletDetail }),
  annotations: annotations.read,
  run: async (ctx, { outlet_id }) => ({ outlet: await getOutletDetail(ctx.pool, ctx.principal.workspaceId, outlet_id) }),
});
