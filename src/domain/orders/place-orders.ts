import type pg from 'pg';
import type { Tx } from '../../db/tx.js';
import type { Clock } from '../clock.js';
import { DomainError, invalidInput } from '../errors.js';
import { type Answer, type OnceKey, type Outcome, recordOnce, type StoredAnswer } from '../idempotency/record-once.js';
import type { WorkspacePrincipal } from '../keys/principal.js';
import * as ledger from '../ledger/ledger.js';
import { formatCents } from '../money/format.js';
import type { OfferFormat } from '../outlets/enums.js';
import { notOwnProject } from '../workspaces/projects.js';
import { analyseContent, type ContentAnalysis, checkContent } from './content-checks.js';
import { type BuyerOrderView, orderView } from './order-view.js';
import { type Durations, initialDeadline, initialStatus } from './states.js';
import { workspaceQueueOf } from './workspace-queue.js';

/** One placement request buys at most this many offers; a plan picks at most as many, so its offer_ids go as they are. */
export const MAX_OFFERS_PER_REQUEST = 50;

export interface PlaceOrdersInput {
  offer_ids: number[];
  target_url: string;
  anchor_text?: string | undefined;
  brief?: string | undefined;
  content?: string | undefined;
  content_title?: string | undefined;
  project_id?: number | undefined;
}

export interface PlaceDeps {
  pool: pg.Pool;
  clock: Clock;
  durations: Durations;
}

export interface PlaceOptions {
  /** Where the outcome is kept once: a REST Idempotency-Key or an MCP confirmation. */
  once: OnceKey | undefined;
  /** How the new orders, or a refusal worth keeping, are answered (status and JSON text). */
  encode: (outcome: Outcome<BuyerOrderView[]>) => StoredAnswer | undefined;
  /** The total a quote showed the user: any other total is refused (quote_changed). */
  quotedTotalCents?: number;
}

/**
 * Places orders: one per offer, all or nothing, each freezing the price it was bought at, the
 * total moving from the workspace's available balance into escrow. The content checks run first,
 * before any lock; then, in the workspace's turn (`WorkspaceQueue`), one transaction that also
 * keeps the outcome once (`options.once`): lock the balance, check, insert the orders, post the
 * ledger movements.
 */
export async function place(deps: PlaceDeps, principal: WorkspacePrincipal, input: PlaceOrdersInput, options: PlaceOptions): Promise<Answer> {
  const content = contentOf(input);
  const { once } = options;
  // A retry of a REST request waiting here is refused at once; a confirmation waits and replays.
  const identity = once?.book === 'request' ? `${once.apiKeyId}:${once.key}` : undefined;
  return workspaceQueueOf(deps.pool).run(principal.workspaceId, identity, () => {
    // The order's time is when it is placed, not when it arrived.
    const now = deps.clock.now();
    return recordOnce(
      deps.pool,
      // Every refusal below comes before the first write, so a kept one has nothing to undo.
      { key: once, now, encode: options.encode, refusesBeforeWriting: true },
      (tx) => placeOrders(tx, principal, input, now, deps.durations, { content, quotedTotalCents: options.quotedTotalCents }),
    );
  });
}

/** The buyer's content and what the checks read from it, computed once, outside any lock. */
function contentOf(input: PlaceOrdersInput) {
  if (input.content === undefined) return undefined;
  const content = { title: input.content_title!, body: input.content };
  return { ...content, analysis: analyseContent(content) };
}

/**
 * Placement in the caller's transaction: lock the workspace's balance, check everything once,
 * insert the orders (with the buyer's content), post their escrow movements.
 */
export async function placeOrders(
  tx: Tx,
  principal: WorkspacePrincipal,
  input: PlaceOrdersInput,
  now: number,
  durations: Durations,
  prepared: { content?: ReturnType<typeof contentOf>; quotedTotalCents?: number | undefined } = {},
): Promise<BuyerOrderView[]> {
  const content = prepared.content ?? contentOf(input);
  const accounts = await ledger.lockWorkspace(tx, principal.workspaceId);
  const { ctx, offers, total, fmt } = judge(await readContext(tx, principal, input), input, prepared.quotedTotalCents);
  if (accounts.availableBalance < total) throw insufficientBalance(total - accounts.availableBalance, accounts.availableBalance, fmt);

  const orders = offers.map((offer) => {
    const status = initialStatus(offer.content_by, content !== undefined);
    return { offer, status, deadline: initialDeadline(status, now, durations), checks: content ? checksFor(content, input, offer) : null };
  });
  const ids = await insertOrders(tx, principal, input, orders, now);
  if (content) await insertContent(tx, ids, content, orders, now);
  await ledger.post(
    tx,
    orders.map((o, i) => ledger.escrow(accounts, { id: ids[i]!, price: o.offer.price })),
  );
  return orders.map((o, i) => view(input, ctx, o, ids[i]!, now, content));
}

/**
 * Everything placement refuses, except the balance, for a quote (MCP's first step): a revoked
 * key, unknown or inactive offers, another workspace's project, a total above the approval limit.
 */
export async function checkPlacement(q: pg.Pool | Tx, principal: WorkspacePrincipal, input: PlaceOrdersInput) {
  return judge(await readContext(q, principal, input), input, undefined);
}

/** A spending key must still be valid inside the transaction that spends (the cache may lag 5 s). */
export async function recheckSpendingKey(tx: Tx, keyId: number): Promise<void> {
  const { rows } = await tx.query<{ ok: boolean }>({
    name: 'key_recheck_spending',
    text: 'SELECT (revoked_at IS NULL AND can_place_orders) AS ok FROM api_keys WHERE id = $1',
    values: [keyId],
  });
  if (!rows[0]?.ok) throw new DomainError('unauthenticated', 'This key has been revoked.');
}

/** The total changed since the quote the user confirmed: nothing is spent. */
export function quoteChanged(quotedCents: number, totalCents: number, fmt: (cents: number) => string): DomainError {
  return new DomainError(
    'quote_changed',
    `The total changed since the quote (quoted ${fmt(quotedCents)}, now ${fmt(totalCents)}). Nothing was spent. Get a new quote and confirm it with the user again.`,
    { quoted_total_cents: quotedCents, total_cents: totalCents },
  );
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

// What placement must know besides the balance: the key still valid, the project the
// workspace's own, the approval limit and currency, and the requested offers.
const contextStatement = {
  name: 'orders_placement_context',
  text: `SELECT (SELECT revoked_at IS NULL AND can_place_orders FROM api_keys WHERE id = $2) AS key_ok,
         ($4::int IS NULL OR EXISTS (SELECT 1 FROM projects WHERE id = $4 AND workspace_id = $3)) AS project_ok,
         w.max_order_cents, w.currency, fx.per_usd::float8 AS per_usd,
         COALESCE((SELECT json_agg(r) FROM (
           SELECT f.id, f.outlet_id, o.name AS outlet_name, o.domain AS outlet_domain, o.publisher_id, f.format, f.title,
                  f.publisher_price_cents, f.fee_cents, f.price, f.turnaround_days, f.content_by, f.min_words, f.max_words,
                  f.max_links, f.active
             FROM offers f JOIN outlets o ON o.id = f.outlet_id WHERE f.id = ANY($1::int[])) r), '[]'::json) AS offers
    FROM workspaces w JOIN fx_rates fx ON fx.currency = w.currency WHERE w.id = $3`,
};

async function readContext(q: pg.Pool | Tx, principal: WorkspacePrincipal, input: PlaceOrdersInput): Promise<PlacementContext | undefined> {
  const { rows } = await q.query<PlacementContext>({
    ...contextStatement,
    values: [input.offer_ids, principal.keyId, principal.workspaceId, input.project_id ?? null],
  });
  return rows[0];
}

/** The placement rules, in the order a refusal names them; the balance is compared by the caller. */
function judge(ctx: PlacementContext | undefined, input: PlaceOrdersInput, quotedTotalCents: number | undefined) {
  if (!ctx?.key_ok) throw new DomainError('unauthenticated', 'This key has been revoked.');
  const byId = new Map(ctx.offers.map((f) => [f.id, f]));
  const unknown = input.offer_ids.filter((id) => !byId.get(id)?.active);
  if (unknown.length) throw invalidInput({ offer_ids: [`unknown or inactive offers: ${unknown.join(', ')}`] });
  if (!ctx.project_ok) throw notOwnProject();
  const offers = input.offer_ids.map((id) => byId.get(id)!);
  const total = offers.reduce((s, f) => s + f.price, 0);
  const fmt = (c: number) => formatCents(c, ctx.currency, ctx.per_usd);
  // A changed total is said first: a refusal over a total the user never saw would have them
  // raise a limit or top up before they see the new price.
  if (quotedTotalCents !== undefined && total !== quotedTotalCents) throw quoteChanged(quotedTotalCents, total, fmt);
  if (ctx.max_order_cents !== null && total > ctx.max_order_cents) {
    throw new DomainError(
      'approval_required',
      `This order totals ${fmt(total)}, above the workspace's approval limit of ${fmt(ctx.max_order_cents)}. Ask an owner to raise the limit or order less.`,
      { total_cents: total, max_order_cents: ctx.max_order_cents },
    );
  }
  return { ctx, offers, total, fmt };
}

function insufficientBalance(needed: number, balance: number, fmt: (c: number) => string): DomainError {
  return new DomainError('insufficient_balance', `The balance is too low: ${fmt(needed)} more is needed.`, {
    needed_cents: needed,
    needed_formatted: fmt(needed),
    balance,
    balance_formatted: fmt(balance),
  });
}

interface NewOrder {
  offer: OfferRow;
  status: ReturnType<typeof initialStatus>;
  deadline: Date;
  checks: ReturnType<typeof checkContent> | null;
}

// One row per offer, in the request's order; ids come from the column default as rows are
// inserted, in that order, so sorted they match the offers.
const insertStatement = {
  name: 'orders_insert',
  text: `INSERT INTO orders (workspace_id, project_id, placed_by_key_id, target_url, anchor_text, brief,
           state_entered_at, created_at, updated_at, outlet_id, offer_id, publisher_id, status, publisher_price_cents,
           fee_cents, price, content_by, turnaround_days, min_words, max_words, max_links, deadline_at)
         SELECT $1, $2, $3, $4, $5, $6, $7, $7, $7, t.outlet_id, t.offer_id, t.publisher_id, t.status::order_status, t.pp,
                t.fee, t.price, t.content_by::content_by, t.turnaround, t.min_words, t.max_words, t.max_links, t.deadline
           FROM unnest($8::int[], $9::int[], $10::int[], $11::text[], $12::bigint[], $13::bigint[], $14::bigint[], $15::text[],
                       $16::int[], $17::int[], $18::int[], $19::int[], $20::timestamptz[]) WITH ORDINALITY
                AS t(outlet_id, offer_id, publisher_id, status, pp, fee, price, content_by, turnaround, min_words, max_words,
                     max_links, deadline, n)
          ORDER BY t.n
         RETURNING id`,
};

async function insertOrders(tx: Tx, principal: WorkspacePrincipal, input: PlaceOrdersInput, orders: NewOrder[], now: number): Promise<number[]> {
  const col = <K extends keyof OfferRow>(k: K) => orders.map((o) => o.offer[k]);
  const { rows } = await tx.query<{ id: number }>({
    ...insertStatement,
    values: [
      principal.workspaceId,
      input.project_id ?? null,
      principal.keyId,
      input.target_url,
      input.anchor_text ?? null,
      input.brief ?? null,
      new Date(now),
      col('outlet_id'),
      col('id'),
      col('publisher_id'),
      orders.map((o) => o.status),
      col('publisher_price_cents'),
      col('fee_cents'),
      col('price'),
      col('content_by'),
      col('turnaround_days'),
      col('min_words'),
      col('max_words'),
      col('max_links'),
      orders.map((o) => o.deadline),
    ],
  });
  return rows.map((r) => Number(r.id)).sort((a, b) => a - b);
}

async function insertContent(tx: Tx, ids: number[], content: { title: string; body: string }, orders: NewOrder[], now: number) {
  await tx.query({
    name: 'orders_insert_content',
    text: `INSERT INTO order_contents (order_id, version, title, body, submitted_by, submitted_at, checks)
           SELECT c.id, 1, $2, $3, 'buyer', $4, c.checks::jsonb FROM unnest($1::bigint[], $5::text[]) AS c(id, checks)`,
    values: [ids, content.title, content.body, new Date(now), orders.map((o) => JSON.stringify(o.checks))],
  });
}

function checksFor(content: { title: string; body: string; analysis: ContentAnalysis }, input: PlaceOrdersInput, offer: OfferRow) {
  const limits = {
    targetUrl: input.target_url,
    anchorText: input.anchor_text ?? null,
    minWords: offer.min_words,
    maxWords: offer.max_words,
    maxLinks: offer.max_links,
  };
  return checkContent(content, limits, content.analysis);
}

/** A new order as the buyer sees it, built from what was written (no second read under the lock). */
function view(
  input: PlaceOrdersInput,
  ctx: PlacementContext,
  o: NewOrder,
  id: number,
  now: number,
  content: { title: string; body: string } | undefined,
): BuyerOrderView {
  const at = new Date(now);
  const f = o.offer;
  return orderView(
    {
      id,
      status: o.status,
      project_id: input.project_id ?? null,
      price: f.price,
      publisher_price_cents: f.publisher_price_cents,
      target_url: input.target_url,
      anchor_text: input.anchor_text ?? null,
      brief: input.brief ?? null,
      live_url: null,
      decline_reason: null,
      deadline_at: o.deadline,
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
      checks: o.checks,
      messages_count: 0,
      currency: ctx.currency,
      per_usd: ctx.per_usd,
    },
    'buyer',
  );
}
