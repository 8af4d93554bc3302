import { z } from 'zod';
import { listLedger } from '../../domain/ledger/ledger-queries.js';
import { ledgerEntry } from '../../schemas/ledger.js';
import { meData } from '../../schemas/me.js';
import { annotations, defineTool, pageArgs, pageMeta, pageMetaSchema } from '../tool.js';

export const getBalance = defineTool({
  name: 'get-balance',
  title: 'Get balance and workspace',
  description:
    'The workspace this API key acts for: available balance and funds held in escrow for open orders (integer US cents, fees included; ' +
    '*_formatted in the workspace currency), approval rules (orders above max_order_cents are refused), brand kits (default anchor texts ' +
    'and tone for briefs), what the key may do (key.can_place_orders must be true to place-orders or approve-placement) and its spending budget ' +
    '(key.budget: order_limit_cents, and per UTC day and month limit_cents, spent_cents, remaining_cents, resets_at; an order over it is ' +
    'refused with budget_exceeded; null = no limits). Free; ' +
    'changes nothing. Call it first, and before a quote to know what the user can afford.',
  input: z.strictObject({}),
  output: meData,
  annotations: annotations.read,
  run: (ctx) => ctx.workspaces.me(ctx.principal, ctx.clock.now()),
});

export const getLedger = defineTool({
  name: 'get-ledger',
  title: 'List ledger entries',
  description:
    "The workspace's ledger, newest first: every movement of its available balance and escrow (held) — top-ups, order placements " +
    '(available → held), releases to publishers on approval, refunds on decline, expiry or cancellation. Amounts are US cents, positive ' +
    'when the account grew; entries of one transaction_id sum to zero. Free; changes nothing. Page with page/per_page (meta.last_page). ' +
    'Next: get-order with an entry\'s order_id for the order behind it.',
  input: z.strictObject(pageArgs),
  output: z.object({ items: z.array(ledgerEntry), meta: pageMetaSchema }),
  annotations: annotations.read,
  run: async (ctx, { page, per_page }) => {
    const { items, total } = await listLedger(ctx.pool, ctx.principal, page, per_page);
    return { items, meta: pageMeta(page, per_page, total, items.length) };
  },
});
