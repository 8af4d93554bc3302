import type pg from 'pg';
import type { Tx } from '../../db/tx.js';
import { DomainError, invalidInput } from '../errors.js';
import type { WorkspacePrincipal } from '../keys/principal.js';
import { type AccountRow, lockWorkspaceAccountsSql, postMovements, workspaceAccounts } from '../ledger/movements.js';
import { formatCents } from '../money/format.js';
import { checkContent } from './content-checks.js';
import type { OfferFormat } from '../outlets/enums.js';
import { orderView } from './order-view.js';
import { deadlineFor, type Durations, type OrderStatus } from './states.js';

export interface PlaceOrdersInput {
  offer_ids: number[];
  target_url: string;
  anchor_text?: string | undefined;
  brief?: string | undefined;
  content?: string | undefined;
  content_title?: string | undefined;
  project_id?: number | undefined;
}

interface OfferRow {
  id: number;
  outlet_id: number;
  outlet_name: string;
  outlet_domain: string;
  publisher_id: number;
  format: OfferFormat;
  title: string;
  publisher_price_cents: number;
  fee_cents: number;
  price: number;
  turnaround_days: number;
  content_by: 'buyer' | 'publisher';
  min_words: number;
  max_words: number;
  max_links: number;
  active: boolean;
}

interface PlacementContext {
  key_ok: boolean | null;
  project_ok: boolean;
  max_order_cents: number | null;
  currency: string;
  per_usd: number;
  offers: OfferRow[];
}

interface LockedPlacementContext extends PlacementContext {
  accounts: AccountRow[] | null;
  order_ids: number[];
}

// Everything placement must know before it touches money, in one round trip: the key still
// valid, the project the workspace's own, the approval rule and currency, and the offers.
const contextColumns = `
  (SELECT revoked_at IS NULL AND can_place_orders FROM api_keys WHERE id = $2) AS key_ok,
  ($4::int IS NULL OR EXISTS (SELECT 1 FROM projects WHERE id = $4 AND workspace_id = $3)) AS project_ok,
  w.max_order_cents, w.currency, fx.per_usd::float8 AS per_usd,
  COALESCE((SELECT json_agg(json_build_object(
      'id', f.id, 'outlet_id', f.outlet_id, 'outlet_name', o.name, 'outlet_domain', o.domain,
      'publisher_id', o.publisher_id, 'format', f.format, 'title', f.title,
      'publisher_price_cents', f.publisher_price_cents, 'fee_cents', f.fee_cents, 'price', f.price,
      'turnaround_days', f.turnaround_days, 'content_by', f.content_by, 'min_words', f.min_words,
      'max_words', f.max_words, 'max_links', f.max_links, 'active', f.active))
    FROM unnest($1::int[]) AS ids(id) JOIN offers f ON f.id = ids.id JOIN outlets o ON o.id = f.outlet_id), '[]'::json) AS offers`;
const contextFrom = 'FROM workspaces w JOIN fx_rates fx ON fx.currency = w.currency WHERE w.id = $3';

// Placement's own variant also locks the workspace's balance rows (the lock that serialises every
// spend of the workspace, taken first as the contract's lock order wants) and draws the new
// orders' ids, so the orders and their ledger entries can be written by one statement.
const lockedContextStatement = `
  WITH acc AS MATERIALIZED (${lockWorkspaceAccountsSql('$3')})
  SELECT ${contextColumns},
         (SELECT json_agg(json_build_object('id', id, 'kind', kind, 'balance', balance)) FROM acc) AS accounts,
         (SELECT json_agg(nextval('orders_id_seq')) FROM unnest($1::int[])) AS order_ids
  ${contextFrom}`;

/** A spending key must still be valid inside the transaction that spends (the cache may lag 5 s). */
export async function recheckSpendingKey(tx: Tx, keyId: number): Promise<void> {
  const { rows } = await tx.query<{ ok: boolean }>({
    name: 'key_recheck_spending',
    text: 'SELECT (revoked_at IS NULL AND can_place_orders) AS ok FROM api_keys WHERE id = $1',
    values: [keyId],
  });
  if (!rows[0]?.ok) throw new DomainError('unauthenticated', 'This key has been revoked.');
}

/**
 * Everything placement refuses before it touches money, in one round trip: a revoked key,
 * unknown or inactive offers, another workspace's project, a total above the approval limit.
 * The MCP quote runs exactly these checks; placement runs them again inside its transaction.
 */
export async function checkPlacement(q: pg.Pool | Tx, principal: WorkspacePrincipal, input: PlaceOrdersInput) {
  const { rows } = await q.query<PlacementContext>({
    name: 'orders_placement_context',
    text: `SELECT ${contextColumns} ${contextFrom}`,
    values: contextValues(principal, input),
  });
  return judgePlacement(rows[0], input);
}

const contextValues = (principal: WorkspacePrincipal, input: PlaceOrdersInput) => [
  input.offer_ids,
  principal.keyId,
  principal.workspaceId,
  input.project_id ?? null,
];

function judgePlacement<C extends PlacementContext>(ctx: C | undefined, input: PlaceOrdersInput) {
  if (!ctx?.key_ok) throw new DomainError('unauthenticated', 'This key has been revoked.');
  const byId = new Map(ctx.offers.map((f) => [f.id, f]));
  const unknown = input.offer_ids.filter((id) => !byId.get(id)?.active);
  if (unknown.length) {
    throw invalidInput({ offer_ids: [`unknown or inactive offers: ${unknown.join(', ')}`] });
  }
  if (!ctx.project_ok) throw invalidInput({ project_id: ['is not a project of this workspace'] });
  const offers = input.offer_ids.map((id) => byId.get(id)!);
  const total = offers.reduce((s, f) => s + f.price, 0);
  const fmt = (c: number) => formatCents(c, ctx.currency, ctx.per_usd);
  if (ctx.max_order_cents !== null && total > ctx.max_order_cents) {
    throw new DomainError(
      'approval_required',
      `This order totals ${fmt(total)}, above the workspace's approval limit of ${fmt(ctx.max_order_cents)}. Ask an owner to raise the limit or order less.`,
      { total_cents: total, max_order_cents: ctx.max_order_cents },
    );
  }
  return { ctx, offers, total, fmt };
}

const placeOrdersCtes = `
  placed AS (
    INSERT INTO orders (id, workspace_id, project_id, placed_by_key_id, outlet_id, offer_id, publisher_id, status,
           publisher_price_cents, fee_cents, price, content_by, turnaround_days, target_url, anchor_text, brief,
           deadline_at, state_entered_at, created_at, updated_at)
    SELECT t.id, $2, $3, $4, t.outlet_id, t.offer_id, t.publisher_id, t.status::order_status, t.pp, t.fee, t.price,
           t.content_by::content_by, t.turnaround, $5, $6, $7, t.deadline, $8, $8, $8
      FROM unnest($1::bigint[], $9::int[], $10::int[], $11::int[], $12::text[], $13::bigint[], $14::bigint[], $15::bigint[],
                  $16::text[], $17::int[], $18::timestamptz[])
           AS t(id, outlet_id, offer_id, publisher_id, status, pp, fee, price, content_by, turnaround, deadline))`;

// A separate statement when the buyer sends content: a statement opens every table it names, with
// their indexes, even when it writes no row there.
const placeOrdersWithContentCtes = `${placeOrdersCtes},
  buyer_content AS (
    INSERT INTO order_contents (order_id, version, title, body, submitted_by, submitted_at, checks)
    SELECT c.id, 1, $19, $20, 'buyer', $8, c.checks::jsonb FROM unnest($1::bigint[], $21::text[]) AS c(id, checks))`;

/**
 * Creates one order per offer and moves their total from available into escrow, all in the
 * caller's transaction: every order is created and paid for, or none. Each order freezes the
 * publisher price, fee and price it was bought at.
 */
export async function placeOrders(tx: Tx, principal: WorkspacePrincipal, input: PlaceOrdersInput, now: number, durations: Durations) {
  const { rows } = await tx.query<LockedPlacementContext>({
    name: 'orders_placement_context_locked',
    text: lockedContextStatement,
    values: contextValues(principal, input),
  });
  const { ctx, offers: offersInOrder, total, fmt } = judgePlacement(rows[0], input);
  const accounts = workspaceAccounts(principal.workspaceId, ctx.accounts);
  if (accounts.availableBalance < total) {
    const needed = total - accounts.availableBalance;
    throw new DomainError('insufficient_balance', `The balance is too low: ${fmt(needed)} more is needed.`, {
      needed_cents: needed,
      needed_formatted: fmt(needed),
      balance: accounts.availableBalance,
      balance_formatted: fmt(accounts.availableBalance),
    });
  }

  const ids = ctx.order_ids;
  const hasContent = input.content !== undefined;
  const at = new Date(now);
  const statuses: OrderStatus[] = offersInOrder.map((f) =>
    hasContent || f.content_by === 'publisher' ? 'awaiting_acceptance' : 'awaiting_content',
  );
  const deadlines = statuses.map((st, i) => deadlineFor(st, now, durations, { turnaroundDays: offersInOrder[i]!.turnaround_days }));
  const content = hasContent ? { title: input.content_title!, body: input.content! } : undefined;
  const checks = offersInOrder.map((f) =>
    content
      ? checkContent(content, {
          targetUrl: input.target_url,
          anchorText: input.anchor_text ?? null,
          minWords: f.min_words,
          maxWords: f.max_words,
          maxLinks: f.max_links,
        })
      : null,
  );

  // The orders, the buyer's content and the escrow movement: one statement.
  await postMovements(
    tx,
    offersInOrder.map((f, i) => ({
      kind: 'order_placed' as const,
      orderId: ids[i]!,
      workspaceId: principal.workspaceId,
      postings: [
        { accountId: accounts.available, kind: 'available' as const, amount: -f.price },
        { accountId: accounts.held, kind: 'held' as const, amount: f.price },
      ],
    })),
    {
      name: content ? 'orders_place_content' : 'orders_place',
      ctes: content ? placeOrdersWithContentCtes : placeOrdersCtes,
      values: [
        ids,
        principal.workspaceId,
        input.project_id ?? null,
        principal.keyId,
        input.target_url,
        input.anchor_text ?? null,
        input.brief ?? null,
        at,
        offersInOrder.map((f) => f.outlet_id),
        offersInOrder.map((f) => f.id),
        offersInOrder.map((f) => f.publisher_id),
        statuses,
        offersInOrder.map((f) => f.publisher_price_cents),
        offersInOrder.map((f) => f.fee_cents),
        offersInOrder.map((f) => f.price),
        offersInOrder.map((f) => f.content_by),
        offersInOrder.map((f) => f.turnaround_days),
        deadlines,
        ...(content ? [content.title, content.body, checks.map((c) => JSON.stringify(c))] : []),
      ],
    },
  );
  // The response is built from what this transaction wrote: no second read under the lock.
  return offersInOrder.map((f, i) =>
    orderView(
      {
        id: ids[i]!,
        status: statuses[i]!,
        project_id: input.project_id ?? null,
        price: f.price,
        publisher_price_cents: f.publisher_price_cents,
        target_url: input.target_url,
        anchor_text: input.anchor_text ?? null,
        brief: input.brief ?? null,
        live_url: null,
        decline_reason: null,
        deadline_at: deadlines[i]!,
        created_at: at,
        updated_at: at,
        outlet_id: f.outlet_id,
        outlet_name: f.outlet_name,
        outlet_domain: f.outlet_domain,
        offer_id: f.id,
        format: f.format,
        offer_title: f.title,
        version: content ? 1 : null,
        content_title: content?.title ?? null,
        content_body: content?.body ?? null,
        submitted_by: content ? 'buyer' : null,
        submitted_at: content ? at : null,
        checks: checks[i] ?? null,
        messages_count: 0,
        currency: ctx.currency,
        per_usd: ctx.per_usd,
      },
      'buyer',
    ),
  );
}
