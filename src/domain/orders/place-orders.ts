import type pg from 'pg';
import { type PreparedSql, proceedGuard, type SqlValue, type Tx } from '../../db/tx.js';
import { DomainError, invalidInput } from '../errors.js';
import type { WorkspacePrincipal } from '../keys/principal.js';
import { type AccountRow, LEDGER_WRITES, lockWorkspaceAccountsSql, postMovements, workspaceAccounts } from '../ledger/movements.js';
import { formatCents } from '../money/format.js';
import { analyseContent, checkContent } from './content-checks.js';
import type { OfferFormat } from '../outlets/enums.js';
import { orderView } from './order-view.js';
import { notOwnProject } from '../workspaces/projects.js';
import { type Durations, initialDeadline, initialStatus } from './states.js';

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
const contextScalars = `
  (SELECT revoked_at IS NULL AND can_place_orders FROM api_keys WHERE id = $2) AS key_ok,
  ($4::int IS NULL OR EXISTS (SELECT 1 FROM projects WHERE id = $4 AND workspace_id = $3)) AS project_ok,
  w.max_order_cents, w.currency, fx.per_usd::float8 AS per_usd`;
const offerColumns = `f.id, f.outlet_id, o.name AS outlet_name, o.domain AS outlet_domain, o.publisher_id, f.format, f.title,
  f.publisher_price_cents, f.fee_cents, f.price, f.turnaround_days, f.content_by, f.min_words, f.max_words, f.max_links, f.active`;
const requestedOffers = 'unnest($1::int[]) WITH ORDINALITY AS ids(id, n) JOIN offers f ON f.id = ids.id JOIN outlets o ON o.id = f.outlet_id';
const contextColumns = `${contextScalars},
  COALESCE((SELECT json_agg(r) FROM (SELECT ${offerColumns} FROM ${requestedOffers}) r), '[]'::json) AS offers`;
const contextFrom = 'FROM workspaces w JOIN fx_rates fx ON fx.currency = w.currency WHERE w.id = $3';

// Placement with the buyer's content also locks the workspace's balance rows (the lock that
// serialises every spend of the workspace, taken first as the contract's lock order wants) and
// draws the new orders' ids, so the content checks can run in Node before one statement writes
// the orders, the content and the ledger entries.
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
  if (!ctx.project_ok) throw notOwnProject();
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

// The columns every new order gets from the request ($2…$8 in both placement statements).
const orderInsert = `INSERT INTO orders (id, workspace_id, project_id, placed_by_key_id, outlet_id, offer_id, publisher_id, status,
           publisher_price_cents, fee_cents, price, content_by, turnaround_days, min_words, max_words, max_links,
           target_url, anchor_text, brief, deadline_at, state_entered_at, created_at, updated_at)`;

/**
 * Placement without content, the common case, in one statement: lock the balance rows, read the
 * context, and — only when every check below passes — write the orders and their escrow
 * movement through the ledger's own CTEs. Node then judges the same context (which also says
 * why nothing was written); the rules that decide a new order's status and deadline stay in
 * Node, passed in as the value for each kind of offer. With a guard, it also writes only when the
 * guard holds (see `guardedPlacement`).
 */
const placeAtOnceText = (guard: string) => `
  WITH acc AS MATERIALIZED (${lockWorkspaceAccountsSql('$3')}),
  req AS MATERIALIZED (SELECT ids.n, ${offerColumns} FROM ${requestedOffers}),
  ctx AS MATERIALIZED (
    SELECT ${contextScalars},
           (SELECT balance FROM acc WHERE kind = 'available') AS available,
           (SELECT count(*) FILTER (WHERE active) FROM req) = cardinality($1::int[]) AS offers_ok,
           (SELECT sum(price) FROM req)::bigint AS total
    ${contextFrom}),
  new AS MATERIALIZED (
    SELECT req.*, nextval('orders_id_seq') AS order_id,
           CASE req.content_by WHEN 'publisher' THEN $9::order_status ELSE $10::order_status END AS status,
           CASE req.content_by WHEN 'publisher' THEN $11::timestamptz ELSE $12::timestamptz END AS deadline
      FROM req, ctx
     WHERE ${guard} AND ctx.key_ok AND ctx.project_ok AND ctx.offers_ok AND ctx.available >= ctx.total
       AND (ctx.max_order_cents IS NULL OR ctx.total <= ctx.max_order_cents)),
  placed AS (
    ${orderInsert}
    SELECT order_id, $3, $4, $2, outlet_id, id, publisher_id, status, publisher_price_cents, fee_cents, price, content_by,
           turnaround_days, min_words, max_words, max_links, $5, $6, $7, deadline, $8, $8, $8 FROM new),
  m AS (SELECT 'order_placed'::ledger_transaction_kind AS kind, order_id, $3::int AS workspace_id, n FROM new),
  p AS (SELECT new.n, acc.id AS account_id, CASE acc.kind WHEN 'available' THEN -new.price ELSE new.price END AS amount
          FROM new CROSS JOIN acc),
  d AS (SELECT acc.id, CASE acc.kind WHEN 'available' THEN -s.total ELSE s.total END AS delta
          FROM acc, (SELECT sum(price)::bigint AS total FROM new) s WHERE s.total IS NOT NULL),
  ${LEDGER_WRITES}
  SELECT ctx.key_ok, ctx.project_ok, ctx.max_order_cents, ctx.currency, ctx.per_usd,
         COALESCE((SELECT json_agg(req) FROM req), '[]'::json) AS offers,
         (SELECT json_agg(json_build_object('id', id, 'kind', kind, 'balance', balance)) FROM acc) AS accounts,
         (SELECT json_agg(order_id ORDER BY n) FROM new) AS order_ids
    FROM ctx`;

const placeAtOnceStatement = placeAtOnceText('true');

const placeOrdersCtes = `
  placed AS (
    ${orderInsert}
    SELECT t.id, $2, $3, $4, t.outlet_id, t.offer_id, t.publisher_id, t.status::order_status, t.pp, t.fee, t.price,
           t.content_by::content_by, t.turnaround, t.min_words, t.max_words, t.max_links, $5, $6, $7, t.deadline, $8, $8, $8
      FROM unnest($1::bigint[], $9::int[], $10::int[], $11::int[], $12::text[], $13::bigint[], $14::bigint[], $15::bigint[],
                  $16::text[], $17::int[], $18::timestamptz[], $22::int[], $23::int[], $24::int[])
           AS t(id, outlet_id, offer_id, publisher_id, status, pp, fee, price, content_by, turnaround, deadline,
                min_words, max_words, max_links)),
  buyer_content AS (
    INSERT INTO order_contents (order_id, version, title, body, submitted_by, submitted_at, checks)
    SELECT c.id, 1, $19, $20, 'buyer', $8, c.checks::jsonb FROM unnest($1::bigint[], $21::text[]) AS c(id, checks))`;

function refuseShortfall(availableBalance: number, total: number, fmt: (c: number) => string): void {
  if (availableBalance >= total) return;
  const needed = total - availableBalance;
  throw new DomainError('insufficient_balance', `The balance is too low: ${fmt(needed)} more is needed.`, {
    needed_cents: needed,
    needed_formatted: fmt(needed),
    balance: availableBalance,
    balance_formatted: fmt(availableBalance),
  });
}

/**
 * Creates one order per offer and moves their total from available into escrow, all in the
 * caller's transaction: every order is created and paid for, or none. Each order freezes the
 * publisher price, fee and price it was bought at.
 */
export async function placeOrders(
  tx: Tx,
  principal: WorkspacePrincipal,
  input: PlaceOrdersInput,
  now: number,
  durations: Durations,
  /** The result of `guardedPlacement` when a batch already ran it (its last result is used). */
  ran?: pg.QueryResult[],
) {
  return input.content === undefined
    ? placeWithoutContent(tx, principal, input, now, durations, ran)
    : placeWithContent(tx, principal, input, input.content, now, durations);
}

// Run by SQL EXECUTE in a batch, so prepared under names of their own: the driver's statements
// (placeWithoutContent's own, 'orders_place_at_once') share the connection's one namespace.
const placeGuarded = {
  name: 'orders_place_guarded',
  types: ['int[]', 'int', 'int', 'int', 'text', 'text', 'text', 'timestamptz', 'order_status', 'order_status', 'timestamptz', 'timestamptz'],
  text: placeAtOnceText(proceedGuard),
} satisfies PreparedSql;

const lockAccounts = { name: 'ledger_lock_workspace_batched', types: ['int'], text: lockWorkspaceAccountsSql('$1') } satisfies PreparedSql;

/**
 * The statement that locks the workspace's balance rows, for a transaction's opening batch. A
 * request that had to wait for the lock (many orders on one workspace) re-checks the row it waited
 * for (EvalPlanQual), which sets up the waiting statement's whole plan a second time: a small
 * statement keeps that cheap, and the placement's own lock then finds the rows held.
 */
// Several workspaces' balance rows in one statement, in the contract's lock order between
// workspaces (by id): a group of placements takes all its locks at once, and two groups can never
// wait for each other in opposite orders. FOR UPDATE locks rows as the sort returns them.
const lockWorkspacesAccounts = {
  name: 'ledger_lock_workspaces_batched',
  types: ['int[]'],
  text: `SELECT id FROM ledger_accounts WHERE workspace_id = ANY($1) AND kind IN ('available', 'held') ORDER BY workspace_id, kind FOR UPDATE`,
} satisfies PreparedSql;

/** The statement that locks the balance rows of every workspace placing orders in one group. */
export function placementLocks(workspaceIds: number[]): { sql: PreparedSql; values: SqlValue[] } {
  return { sql: lockWorkspacesAccounts, values: [[...new Set(workspaceIds)].sort((a, b) => a - b)] };
}

export function placementLock(principal: WorkspacePrincipal): { sql: PreparedSql; values: SqlValue[] } {
  return { sql: lockAccounts, values: [principal.workspaceId] };
}

/**
 * Placement without content as one statement for a batch (`executeSql`), known from the request
 * alone, that writes only when `proceedGuard` holds: several requests then run in one round trip,
 * each after its own guard is set. `placeOrders` judges its result when given it (`ran`), and
 * `assertNothingPlaced` checks one whose guard was off.
 */
export function guardedPlacement(
  principal: WorkspacePrincipal,
  input: PlaceOrdersInput,
  now: number,
  durations: Durations,
): { sql: PreparedSql; values: SqlValue[] } {
  if (input.content !== undefined) throw new Error('a placement with content cannot run as one statement');
  return { sql: placeGuarded, values: placeAtOnceValues(principal, input, now, durations) };
}

/** Throws when a guarded placement wrote orders: its guard was off, so it must not have. */
export function assertNothingPlaced(result: pg.QueryResult | undefined): void {
  if ((result?.rows[0] as LockedPlacementContext | undefined)?.order_ids) throw new Error('a guarded placement wrote orders with its guard off');
}

function placeAtOnceValues(principal: WorkspacePrincipal, input: PlaceOrdersInput, now: number, durations: Durations) {
  const statusOf = { publisher: initialStatus('publisher', false), buyer: initialStatus('buyer', false) };
  return [
    ...contextValues(principal, input),
    input.target_url,
    input.anchor_text ?? null,
    input.brief ?? null,
    new Date(now),
    statusOf.publisher,
    statusOf.buyer,
    initialDeadline(statusOf.publisher, now, durations),
    initialDeadline(statusOf.buyer, now, durations),
  ];
}

async function placeWithoutContent(
  tx: Tx,
  principal: WorkspacePrincipal,
  input: PlaceOrdersInput,
  now: number,
  durations: Durations,
  ran: pg.QueryResult[] | undefined,
) {
  const result = (ran?.at(-1) ??
    (await tx.query({ name: 'orders_place_at_once', text: placeAtOnceStatement, values: placeAtOnceValues(principal, input, now, durations) }))) as pg.QueryResult<LockedPlacementContext>;
  const { rows } = result;
  let judged: ReturnType<typeof judgePlacement<LockedPlacementContext>>;
  try {
    judged = judgePlacement(rows[0], input);
    refuseShortfall(workspaceAccounts(principal.workspaceId, judged.ctx.accounts).availableBalance, judged.total, judged.fmt);
  } catch (err) {
    // The statement's checks are the same as these: a refusal wrote nothing. A caller that
    // commits refusals (the idempotency batch) relies on that, so it is checked.
    assertNothingPlaced(result);
    throw err;
  }
  const { ctx, offers } = judged;
  // Every check above passed, so the statement wrote the orders; its own checks are the same.
  if (!ctx.order_ids) throw new Error('placement passed every check but wrote no order');
  return orderViews(input, ctx, offers, ctx.order_ids, now, durations, undefined).map((o) => o.view);
}

async function placeWithContent(
  tx: Tx,
  principal: WorkspacePrincipal,
  input: PlaceOrdersInput,
  body: string,
  now: number,
  durations: Durations,
) {
  const { rows } = await tx.query<LockedPlacementContext>({
    name: 'orders_placement_context_locked',
    text: lockedContextStatement,
    values: contextValues(principal, input),
  });
  const { ctx, offers, total, fmt } = judgePlacement(rows[0], input);
  const accounts = workspaceAccounts(principal.workspaceId, ctx.accounts);
  refuseShortfall(accounts.availableBalance, total, fmt);

  const ids = ctx.order_ids;
  const content = { title: input.content_title!, body };
  const views = orderViews(input, ctx, offers, ids, now, durations, content);
  // The orders, the buyer's content and the escrow movement: one statement.
  await postMovements(
    tx,
    offers.map((f, i) => ({
      kind: 'order_placed' as const,
      orderId: ids[i]!,
      workspaceId: principal.workspaceId,
      postings: [
        { accountId: accounts.available, kind: 'available' as const, amount: -f.price },
        { accountId: accounts.held, kind: 'held' as const, amount: f.price },
      ],
    })),
    {
      name: 'orders_place_content',
      ctes: placeOrdersCtes,
      values: [
        ids,
        principal.workspaceId,
        input.project_id ?? null,
        principal.keyId,
        input.target_url,
        input.anchor_text ?? null,
        input.brief ?? null,
        new Date(now),
        offers.map((f) => f.outlet_id),
        offers.map((f) => f.id),
        offers.map((f) => f.publisher_id),
        views.map((v) => v.status),
        offers.map((f) => f.publisher_price_cents),
        offers.map((f) => f.fee_cents),
        offers.map((f) => f.price),
        offers.map((f) => f.content_by),
        offers.map((f) => f.turnaround_days),
        views.map((v) => v.deadline),
        content.title,
        content.body,
        views.map((v) => JSON.stringify(v.checks)),
        offers.map((f) => f.min_words),
        offers.map((f) => f.max_words),
        offers.map((f) => f.max_links),
      ],
    },
  );
  return views.map((v) => v.view);
}

/**
 * The new orders as the buyer sees them, built from what the placement wrote (no second read
 * under the lock), with each one's status, deadline and content checks.
 */
function orderViews(
  input: PlaceOrdersInput,
  ctx: PlacementContext,
  offers: OfferRow[],
  ids: number[],
  now: number,
  durations: Durations,
  content: { title: string; body: string } | undefined,
) {
  const at = new Date(now);
  // The body is read once; each offer only compares it with its own limits.
  const analysis = content ? analyseContent(content) : undefined;
  return offers.map((f, i) => {
    const status = initialStatus(f.content_by, content !== undefined);
    const deadline = initialDeadline(status, now, durations);
    const checks = content
      ? checkContent(
          content,
          {
            targetUrl: input.target_url,
            anchorText: input.anchor_text ?? null,
            minWords: f.min_words,
            maxWords: f.max_words,
            maxLinks: f.max_links,
          },
          analysis,
        )
      : null;
    const view = orderView(
      {
        id: ids[i]!,
        status,
        project_id: input.project_id ?? null,
        price: f.price,
        publisher_price_cents: f.publisher_price_cents,
        target_url: input.target_url,
        anchor_text: input.anchor_text ?? null,
        brief: input.brief ?? null,
        live_url: null,
        decline_reason: null,
        deadline_at: deadline,
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
        checks,
        messages_count: 0,
        currency: ctx.currency,
        per_usd: ctx.per_usd,
      },
      'buyer',
    );
    return { view, status, deadline, checks };
  });
}
