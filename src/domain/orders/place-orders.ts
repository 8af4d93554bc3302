import type pg from 'pg';
import type { Db, Statement } from '../../db/handle.js';
import type { Clock } from '../clock.js';
import { DomainError, invalidInput, notFound } from '../errors.js';
import { GroupCommit } from '../../db/group-commit.js';
import { isDatabaseUnavailable } from '../../db/errors.js';
import {
  type ClaimRow,
  type ClaimsInRead,
  claimsWith,
  inProgress,
  type Kept,
  noClaims,
  noRecords,
  type OnceKey,
  type Outcome,
  recordEach,
  recordOnce,
  recordsWith,
  type RecordsInWrite,
  type RequestKey,
} from '../idempotency/record-once.js';
import type { ApprovalReason, MemberRole } from '../../common/enums.js';
import { requireSpend } from '../users/permissions.js';
import { type BuyerActor, isMember } from './buyer-actor.js';
import { orderPlacedEvents } from './order-events.js';
import { eventRows, eventsInsert, type NewEvent } from '../events/record.js';
import { budgetExceeded, type Exhausted, hasSpendLimits, type KeyLimits, overrun, readSpent, recordExhausted, windowsRunOut } from '../keys/budget.js';
import * as ledger from '../ledger/ledger.js';
import { formatCents } from '../money/format.js';
import type { OfferFormat } from '../outlets/enums.js';
import { notOwnProject } from '../workspaces/projects.js';
import { analyseContentFor, type ContentAnalysis, checkContent } from './content-checks.js';
import { type BuyerOrderView, type OrderRow, orderView } from './order-view.js';
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

export interface PlaceDeps {
  pool: pg.Pool;
  clock: Clock;
  durations: Durations;
}

export interface PlaceOptions {
  /** Where the outcome is kept once: a REST Idempotency-Key or an MCP confirmation. */
  once: OnceKey | undefined;
  /** Which refusals are kept with it (none unless said; the new orders always are). */
  keeps?: ((error: DomainError) => boolean) | undefined;
  /** The total a quote showed the user: any other total is refused (quote_changed). */
  quotedTotalCents?: number;
}

/**
 * Why a key's placement must wait for a person (docs/approvals.md): the key needs approval for
 * every spending action, or the total is above the workspace's `approval_above_cents`.
 */
export type { ApprovalReason };

/**
 * A key's spending action that passed every check and must now wait for a person: thrown instead
 * of acting, never kept (the approvals area turns it into an approval request, kept in its stead).
 * Carries what the request shows: for a placement the offers as checked, for an approval of a
 * live placement the order; and the total.
 */
export class ApprovalNeeded extends DomainError {
  constructor(
    readonly reason: ApprovalReason,
    readonly total: number,
    readonly offers: PlacementOfferRow[],
    readonly orderId: number | null = null,
  ) {
    super('approval_required', "This order needs a person's approval.", { total_cents: total });
    this.name = 'ApprovalNeeded';
  }
}

/** A person approved the placement: it runs for the key that asked, its budget counting but never refusing it. */
export interface ApprovedBy {
  requestId: number;
}

/**
 * Places orders: one per offer, all or nothing, each freezing the price it was bought at, the
 * total moving from the workspace's available balance into escrow. The content checks run first,
 * before any lock; then one transaction that also keeps the outcome once (`options.once`): lock
 * the balance, check, insert the orders, post the ledger movements. Placements that arrive while
 * others run are committed together (`groups`, made once by `placementGroups`).
 */
export async function place(groups: PlacementGroups, principal: BuyerActor, input: PlaceOrdersInput, options: PlaceOptions): Promise<Kept<BuyerOrderView[]>> {
  const content = contentOf(input);
  const { once } = options;
  const job: PlacementJob = {
    workspaceId: principal.workspaceId,
    orders: input.offer_ids.length,
    // A retry of a REST request waiting or running here is refused at once; every other job is
    // its own (a repeated confirmation, or a console form sent twice, waits for the first in its
    // workspace's line, then replays).
    identity: once?.book === 'request' ? `${once.apiKeyId}:${once.key}` : `job:${++jobs}`,
    // A placement with content, a confirmation, a person's or one without a key runs alone.
    grouped: once?.book === 'request' && content === undefined ? once : undefined,
    placement: { principal, input, content, quotedTotalCents: options.quotedTotalCents },
    once,
    keeps: options.keeps,
  };
  return groups.run(job);
}

let jobs = 0;

interface PlacementJob {
  workspaceId: number;
  orders: number;
  identity: string;
  grouped: RequestKey | undefined;
  placement: Placement;
  once: OnceKey | undefined;
  keeps: PlaceOptions['keeps'];
}

/** The most orders a group places (a placement may hold up to 50). */
const MAX_GROUP_ORDERS = 100;
/**
 * How long a group waits for a lock (a workspace's balance rows held by another transaction)
 * before it fails and its placements run again alone: the others in it then wait no longer.
 */
const GROUP_LOCK_TIMEOUT_MS = 250;
/**
 * While a group runs, the next starts only after this long (GroupCommit's `staggerMs`). Every
 * group pays the same two round trips whatever its size (BEGIN with the claims, the records'
 * lookup and the lock; the write with the records, and COMMIT), so bigger groups cost less per
 * order. Under ten clients, 3 ms made groups of about 2.4 placements and 8 ms about 4.2, for 0.8
 * of the server's CPU and 0.7 of the database's per order, and as many orders a second; 15 ms
 * made groups of five and fewer orders a second (bench/RESULTS.md, "A longer stagger"). With two
 * round trips, 2, 4 and 6 ms did no better than 8 ("Two round trips a group"). A lone client
 * never waits: with no group running, a group starts at once.
 */
const GROUP_STAGGER_MS = 8;

/** The placements of one pool, waiting and running: one per pool, made by whoever owns the pool. */
export type PlacementGroups = ReturnType<typeof placementGroups>;

/**
 * Group commit, per pool: placements that arrive while the groups running take all but one of the
 * pool's connections wait in the process, holding no connection, and then go together in one
 * transaction (`recordEach` and `placeAll`: one statement for each step whatever the group's
 * size, two round trips in all: BEGIN with the transaction's settings, sent with the claims of the
 * keys, the lookup of their records and the lock of the balances; then the write of the orders
 * with the records, sent with COMMIT; more for spending-limited keys, see `placeAll`). A
 * workspace has one group or lone placement running at a time per process, in arrival order, so
 * a workspace whose rows are held elsewhere ties up one connection, not the pool. A group that waits for a lock
 * longer than GROUP_LOCK_TIMEOUT_MS, or fails, puts its placements back to run alone. Waiting
 * here longer than a request may wait for a connection is the same 503.
 */
export function placementGroups(deps: PlaceDeps): GroupCommit<PlacementJob, Kept<BuyerOrderView[]>> {
  const { pool, clock, durations } = deps;
  const runAlone = (job: PlacementJob) => {
    // The order's time is when it is placed, not when it arrived.
    const now = clock.now();
    return recordOnce(
      pool,
      // Every refusal comes before the first write, so a kept one has nothing to undo.
      { key: job.once, now, keeps: job.keeps, refusesBeforeWriting: true },
      (tx) => placeOrders(tx, job.placement.principal, job.placement.input, now, durations, job.placement),
    );
  };
  const created = new GroupCommit<PlacementJob, Kept<BuyerOrderView[]>>({
    // Every connection but one for groups: the one left serves lone placements and other routes.
    inFlight: Math.max(1, (pool.options.max ?? 10) - 1),
    staggerMs: GROUP_STAGGER_MS,
    maxWeight: MAX_GROUP_ORDERS,
    weightOf: (job) => job.orders,
    maxWaitMs: pool.options.connectionTimeoutMillis ?? 2_000,
    timedOut: () => new DomainError('unavailable', 'Too many orders are being placed at once. Retry shortly.'),
    laneOf: (job) => job.workspaceId,
    identityOf: (job) => job.identity,
    identityInUse: inProgress,
    alone: (job) => job.grouped === undefined,
    // No connection to be had: each placement gets the 503 now rather than wait for another.
    retryAlone: (error) => !isDatabaseUnavailable(error),
    run: async (batch, mode) => {
      if (mode === 'alone') return [{ ok: true, value: await runAlone(batch[0]!) }];
      const now = clock.now();
      return recordEach(
        pool,
        batch.map((job) => ({ key: job.grouped!, keeps: job.keeps })),
        now,
        (tx, claims, records) => placeAll(tx, batch.map((job) => job.placement), now, durations, { claims, records }),
        GROUP_LOCK_TIMEOUT_MS,
      );
    },
  });
  return created;
}

/** The buyer's content and what the checks read from it, computed once, outside any lock. */
function contentOf(input: PlaceOrdersInput) {
  if (input.content === undefined) return undefined;
  const content = { title: input.content_title!, body: input.content };
  return { ...content, analysis: analyseContentFor(content, input.target_url) };
}

/** One placement request, as `placeAll` takes it. */
export interface Placement {
  principal: BuyerActor;
  input: PlaceOrdersInput;
  content?: ReturnType<typeof contentOf> | undefined;
  quotedTotalCents?: number | undefined;
  /** Set when a person approved this placement (an approval request): it never asks again. */
  approved?: ApprovedBy | undefined;
}

/**
 * Placement in the caller's transaction: lock the workspace's balance, check everything once,
 * insert the orders (with the buyer's content), post their escrow movements.
 */
export async function placeOrders(
  tx: Db,
  principal: BuyerActor,
  input: PlaceOrdersInput,
  now: number,
  durations: Durations,
  prepared: { content?: ReturnType<typeof contentOf>; quotedTotalCents?: number | undefined; approved?: ApprovedBy | undefined } = {},
): Promise<BuyerOrderView[]> {
  const content = prepared.content ?? contentOf(input);
  const [outcome] = await placeAll(tx, [{ principal, input, content, quotedTotalCents: prepared.quotedTotalCents, approved: prepared.approved }], now, durations);
  if (!outcome!.ok) throw outcome!.error;
  return outcome!.value;
}

/**
 * Several placements in the caller's transaction, each answered as if it ran alone, in their
 * order: lock every workspace's balance (taking the new orders' ids), check each placement
 * against what the ones before it spent, then in one statement insert all their orders, post all
 * their escrow movements, record their `order.placed` events and, for a group, store the records
 * of every placement's outcome (`records`, from `recordEach`). A refusal is that placement's
 * outcome and writes nothing; the others go on.
 */
export async function placeAll(
  tx: Db,
  all: Placement[],
  now: number,
  durations: Durations,
  group?: { claims: ClaimsInRead; records: RecordsInWrite<BuyerOrderView[]> },
): Promise<Array<Outcome<BuyerOrderView[]>>> {
  const read = await readContexts(tx, all, now, { claims: group?.claims });
  // A group's placements whose keys were claimed and hold no record go on (only their balances
  // were locked, only their ids taken); the others are answered by `recordEach`.
  const admitted = group ? await group.claims.admit(read) : all.map((_, i) => i);
  const placements = admitted.map((i) => all[i]!);
  const contexts = admitted.map((i) => read[i]!);
  const accounts = ledger.lockedAccounts(
    placements.map((p) => p.principal.workspaceId),
    contexts.flatMap((c) => c.balances!),
  );
  const records = group?.records;
  // What each limited key's budget spent, read after the lock (a key without limits reads
  // nothing); each accepted order below adds to it, so the ones after count it.
  const budgets = [...new Set(contexts.filter((c) => c.key_ok && hasSpendLimits(c)).map((c) => c.budget_id))];
  const spent = await readSpent(tx, budgets, now);
  const exhausted: Exhausted[] = [];
  const outcomes: Array<Outcome<BuyerOrderView[]>> = [];
  const accepted: Array<{ at: number; p: Placement; ctx: PlacementContext; orders: NewOrder[] }> = [];
  for (const [at, p] of placements.entries()) {
    try {
      const { ctx, offers, total, fmt, asks } = judge(contexts[at], p.principal, p.input, p.quotedTotalCents, p.approved);
      const s = spent.get(ctx.budget_id) ?? { day: 0, month: 0 };
      // A person's approval is never refused by the key's budget, though it counts against it.
      const over = p.approved ? undefined : overrun(ctx, s, total, now);
      if (over) throw budgetExceeded(over.window, over.view, total, fmt);
      const w = accounts.get(p.principal.workspaceId)!;
      if (w.availableBalance < total) throw insufficientBalance(total - w.availableBalance, w.availableBalance, fmt);
      // Every check passed, and a person must decide: nothing is held while they do.
      if (asks) throw new ApprovalNeeded(asks, total, offers);
      w.availableBalance -= total;
      // A person has no key, so no budget (its limits read as none): nothing runs out.
      if (!isMember(p.principal)) {
        const { keyId, name, prefix, workspaceId } = p.principal;
        for (const r of windowsRunOut(ctx, s, total)) exhausted.push({ ...r, workspaceId, budgetId: ctx.budget_id, key: { id: keyId, name, prefix }, fmt });
      }
      s.day += total;
      s.month += total;
      const orders = offers.map((offer) => {
        const status = initialStatus(offer.content_by, p.content !== undefined);
        return { offer, status, deadline: initialDeadline(status, now, durations), checks: p.content ? checksFor(p.content, p.input, offer) : null };
      });
      accepted.push({ at, p, ctx, orders });
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      outcomes[at] = { ok: false, error };
    }
  }
  if (accepted.length === 0) return outcomes;
  // The ids the accepted placements took, given in ascending order down their orders, as the
  // column default gave them: orders placed together list in arrival order.
  const ids = accepted.flatMap((a) => contexts[a.at]!.order_ids!.map(Number)).sort((x, y) => x - y);
  let k = 0;
  const rows = accepted.flatMap((a) => a.orders.map((order) => ({ p: a.p, order, id: ids[k++]! })));
  if (k !== ids.length) throw new Error('the placements took another number of order ids than they have orders');
  // The orders as they will be written, known without reading them back under the lock: the
  // answer and both parties' `order.placed` events are views of the same rows.
  k = 0;
  const placed = accepted.map((a) => a.orders.map((o) => newOrderRow(a.p.input, a.ctx, o, rows[k++]!.id, now, a.p.content)));
  // Every outcome is known now, before the write: a group's records go in its statement.
  accepted.forEach((a, i) => {
    outcomes[a.at] = { ok: true, value: placed[i]!.map((row) => orderView(row, 'buyer')) };
  });
  const writes = [
    writeOrders(
      rows,
      rows.map((r) => ledger.escrow(accounts.get(r.p.principal.workspaceId)!, { id: r.id, price: r.order.offer.price })),
      orderPlacedEvents(accepted.flatMap((a, i) => placed[i]!.map((row) => ({ workspaceId: a.p.principal.workspaceId, publisherId: row.publisher_id, row })))),
      now,
      records ? records.values(outcomes) : noRecords(),
    ),
    ...(rows.some((r) => r.p.content) ? [insertContent(rows, now)] : []),
  ];
  // A group's write ends its transaction: sent with COMMIT, one round trip. A key whose budget
  // ran out takes statements that depend on each other's answers (`recordExhausted`), so its
  // group commits after them.
  if (records && exhausted.length === 0) {
    await records.commitWith(tx, writes);
    return outcomes;
  }
  if (records) await records.send(tx, writes);
  else for (const statement of writes) await tx.query(statement);
  await recordExhausted(tx, exhausted, now);
  return outcomes;
}

/**
 * Everything placement refuses, except the balance, for a quote (MCP's first step): a revoked
 * key, unknown or inactive offers, another workspace's project, a total above the approval limit;
 * and `asks`, whether a person will have to approve it.
 */
export async function checkPlacement(q: Db, principal: BuyerActor, input: PlaceOrdersInput, now: number) {
  return judge((await readContexts(q, [{ principal, input }], now))[0], principal, input, undefined, undefined);
}

/**
 * A spending key must still be valid inside the transaction that spends: the cache may lag 5 s
 * behind a revocation, and a request may have waited past the key's expiry.
 */
export async function recheckSpendingKey(tx: Db, keyId: number, now: number): Promise<{ needsApproval: boolean }> {
  const { rows } = await tx.query<{ ok: boolean; needs_approval: boolean }>({
    name: 'key_recheck_spending',
    text: `SELECT (revoked_at IS NULL AND can_place_orders AND ${KEY_NOT_EXPIRED('$2', '')}) AS ok, needs_approval FROM api_keys WHERE id = $1`,
    values: [keyId, new Date(now)],
  });
  if (!rows[0]?.ok) throw new DomainError('unauthenticated', 'This key has been revoked or has expired.');
  return { needsApproval: rows[0].needs_approval };
}

/** The total changed since the quote the user confirmed: nothing is spent. */
export function quoteChanged(quotedCents: number, totalCents: number, fmt: (cents: number) => string): DomainError {
  return new DomainError(
    'quote_changed',
    `The total changed since the quote (quoted ${fmt(quotedCents)}, now ${fmt(totalCents)}). Nothing was spent. Get a new quote and confirm it with the user again.`,
    { quoted_total_cents: quotedCents, total_cents: totalCents },
  );
}

/** An offer as placement reads it (with its outlet and publisher), not the catalog's OfferRow. */
export interface PlacementOfferRow {
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
  link_type: 'dofollow' | 'nofollow';
  sponsored_label: boolean;
  active: boolean;
}

interface PlacementContext extends KeyLimits {
  key_ok: boolean | null;
  /** The key's own flag: every spending action waits for a person (null for a person). */
  needs_approval: boolean | null;
  approval_above_cents: number | null;
  /** A person's role in the workspace, read in the placing transaction; null for a key or a non-member. */
  member_role: MemberRole | null;
  project_ok: boolean;
  max_order_cents: number | null;
  currency: string;
  per_usd: number;
  offers: PlacementOfferRow[];
}

// The workspaces whose balances the lock statement locks: every placement's, but in a group only
// those of the placements that go on (`claim_admitted`): a replay or a key in use locks nothing.
const goingOn = `ARRAY(SELECT u.w FROM unnest($2::int[]) WITH ORDINALITY AS u(w, n)
                    LEFT JOIN claimed c ON c.n = u.n WHERE c.claim_admitted IS NOT FALSE)`;

/** The key (columns prefixed `k`, such as 'k.') has not expired at the time `at` (a timestamptz parameter). */
const KEY_NOT_EXPIRED = (at: string, k: string) => `(${k}expires_at IS NULL OR ${k}expires_at > ${at})`;

// What each placement must know besides the balance: the key still valid at the time given as $6
// (not revoked, not expired: the request may have waited past its expiry), or the person's role,
// the project the workspace's own, the approval limit and currency, and the requested offers
// (given as text, "1,2,3": one row per placement). A placement also locks the balance rows and
// reads them in the same statement (`lock`: one round trip fewer); the rest is then read as at
// the statement's start, before any wait for the lock (at most the group's lock timeout, or the
// statement's). Locking, it also takes the ids of the orders each placement would make (one per
// offer) from the orders' sequence, so the orders, their ledger movements and their events are
// written together by one statement (`writeOrders`). A placement then refused leaves its ids
// unused: a gap in the sequence, as a rolled-back placement always left. For a group, the same
// statement claims the placements' keys and looks up their records (`claimsWith`, parameters $7
// to $9; none for a placement alone, already claimed by `recordOnce`): one round trip fewer.
const contextsText = (lock: boolean) => `${lock ? `WITH ${claimsWith(7)},\n  ${ledger.balanceLock(goingOn)}\n` : ''}SELECT
         k.revoked_at IS NULL AND k.can_place_orders AND ${KEY_NOT_EXPIRED('$6', 'k.')} AS key_ok, k.needs_approval,
         k.order_limit_cents::float8 AS order_limit_cents, k.daily_limit_cents::float8 AS daily_limit_cents,
         k.monthly_limit_cents::float8 AS monthly_limit_cents, COALESCE(k.budget_key_id, k.id) AS budget_id,
         (SELECT m.role FROM memberships m WHERE m.user_id = r.user_id AND m.workspace_id = r.workspace_id) AS member_role,
         (r.project_id IS NULL OR EXISTS (SELECT 1 FROM projects WHERE id = r.project_id AND workspace_id = r.workspace_id)) AS project_ok,
         w.max_order_cents, w.approval_above_cents::float8 AS approval_above_cents, w.currency, fx.per_usd::float8 AS per_usd,
         COALESCE((SELECT json_agg(x) FROM (
           SELECT f.id, f.outlet_id, o.name AS outlet_name, o.domain AS outlet_domain, o.publisher_id, f.format, f.title,
                  f.publisher_price_cents, f.fee_cents, f.price, f.turnaround_days, f.content_by, f.min_words, f.max_words,
                  f.max_links, f.link_type, f.sponsored_label, f.active
             FROM offers f JOIN outlets o ON o.id = f.outlet_id
            WHERE f.id = ANY(string_to_array(r.offer_ids, ',')::int[])) x), '[]'::json) AS offers,
         ${lock ? 'COALESCE((SELECT json_agg(l) FROM locked l WHERE l.workspace_id = r.workspace_id), \'[]\'::json)' : 'NULL::json'} AS balances,
         ${lock ? "CASE WHEN c.claim_admitted IS NOT FALSE THEN ARRAY(SELECT nextval('orders_id_seq') FROM generate_series(1, cardinality(string_to_array(r.offer_ids, ',')))) END" : 'NULL::bigint[]'} AS order_ids,
         ${lock ? 'c.claim_ok, c.claim_fingerprint, c.claim_outcome, c.claim_admitted' : 'NULL::boolean AS claim_ok, NULL::text AS claim_fingerprint, NULL::text AS claim_outcome, NULL::boolean AS claim_admitted'}
    FROM unnest($1::int[], $2::int[], $3::int[], $4::text[], $5::int[]) WITH ORDINALITY AS r(key_id, workspace_id, project_id, offer_ids, user_id, n)
    JOIN workspaces w ON w.id = r.workspace_id JOIN fx_rates fx ON fx.currency = w.currency
    LEFT JOIN api_keys k ON k.id = r.key_id
    ${lock ? 'LEFT JOIN claimed c ON c.n = r.n' : ''}
   ORDER BY r.n`;
const contextStatement = { name: 'orders_placement_contexts', text: contextsText(false) };
const lockStatement = { name: 'orders_placement_lock_contexts', text: contextsText(true) };

/** `order_ids` as bigint[] arrives as text (only the single INT8 is parsed as a number). */
type ContextRow = PlacementContext & ClaimRow & { balances: ledger.BalanceRow[] | null; order_ids: string[] | null };

/** The placements' contexts; locking, the balances and new order ids too, and the claims given. */
async function readContexts(
  q: Db,
  placements: Array<Pick<Placement, 'principal' | 'input'>>,
  now: number,
  lock?: { claims: ClaimsInRead | undefined },
): Promise<ContextRow[]> {
  const { rows } = await q.query<ContextRow>({
    ...(lock ? lockStatement : contextStatement),
    values: [
      placements.map((p) => keyIdOf(p.principal)),
      placements.map((p) => p.principal.workspaceId),
      placements.map((p) => p.input.project_id ?? null),
      placements.map((p) => p.input.offer_ids.join(',')),
      placements.map((p) => (isMember(p.principal) ? p.principal.userId : null)),
      new Date(now),
      ...(lock ? (lock.claims?.values() ?? noClaims()) : []),
    ],
  });
  if (rows.length !== placements.length) throw new Error('a placement has no workspace or currency');
  return rows;
}

const keyIdOf = (p: BuyerActor) => (isMember(p) ? null : p.keyId);

/**
 * Who places must still be allowed to, as read in the placing transaction: a key not revoked
 * that can place orders, or a person whose role in the workspace may spend (the role table's
 * `spend`, as approving a placement asks), so a role lowered a moment ago places nothing.
 */
function requirePlacer(ctx: PlacementContext | undefined, principal: BuyerActor): asserts ctx is PlacementContext {
  if (!isMember(principal)) {
    if (!ctx?.key_ok) throw new DomainError('unauthenticated', 'This key has been revoked or has expired.');
    return;
  }
  if (!ctx?.member_role) throw notFound('Workspace');
  requireSpend(ctx.member_role, 'place');
}

/**
 * The placement rules, in the order a refusal names them; the balance is compared by the caller.
 * `asks` says why a person must approve it first (a key's placement only: a person placing in
 * the console is that person), unless one already has (`approved`).
 */
function judge(ctx: PlacementContext | undefined, principal: BuyerActor, input: PlaceOrdersInput, quotedTotalCents: number | undefined, approved: ApprovedBy | undefined) {
  requirePlacer(ctx, principal);
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
  let asks: ApprovalReason | undefined;
  if (!isMember(principal) && !approved) {
    if (ctx.needs_approval) asks = 'key_needs_approval';
    else if (ctx.approval_above_cents !== null && total > ctx.approval_above_cents) asks = 'above_approval_limit';
  }
  return { ctx, offers, total, fmt, asks };
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
  offer: PlacementOfferRow;
  status: ReturnType<typeof initialStatus>;
  deadline: Date;
  checks: ReturnType<typeof checkContent> | null;
}

type Row = { p: Placement; order: NewOrder; id: number };

// The orders (their ids taken already, by the lock statement), their escrow movements, both
// parties' `order.placed` events and a group's records of its outcomes, in one statement of
// data-modifying WITH queries, each written by the module that owns the table
// (`ledger.postingWith`, `eventsInsert`, `recordsWith`). The parts see none of each other's rows
// and need not: every id is known before, and the foreign keys (a ledger transaction's order) are
// checked at the end of the statement, as the balance CHECK is. A key that holds a live record
// fails it (`recordsWith`), and the group with it.
// Parameters: $1 the orders (one JSON parameter of named fields, nothing to count), $2 the time,
// $3 the events, $4 to $12 the ledger's, $13 to $18 the records' (none outside a group).
const writeStatement = {
  name: 'orders_place',
  text: `WITH orders_written AS (
         INSERT INTO orders (id, workspace_id, project_id, placed_by_key_id, placed_by_user_id, approval_request_id, target_url, anchor_text, brief,
           outlet_id, offer_id, publisher_id, status, publisher_price_cents, fee_cents, price, content_by, turnaround_days,
           min_words, max_words, max_links, link_type, sponsored_label, deadline_at, state_entered_at, created_at, updated_at)
         SELECT t.id, t.workspace_id, t.project_id, t.placed_by_key_id, t.placed_by_user_id, t.approval_request_id, t.target_url, t.anchor_text, t.brief,
                t.outlet_id, t.offer_id, t.publisher_id, t.status, t.publisher_price_cents, t.fee_cents, t.price, t.content_by,
                t.turnaround_days, t.min_words, t.max_words, t.max_links, t.link_type, t.sponsored_label, t.deadline_at, $2, $2, $2
           FROM json_to_recordset($1::json) AS t(
                  id bigint, workspace_id int, project_id int, placed_by_key_id int, placed_by_user_id int, approval_request_id bigint, target_url text, anchor_text text,
                  brief text, outlet_id int, offer_id int, publisher_id int, status order_status, publisher_price_cents bigint,
                  fee_cents bigint, price bigint, content_by content_by, turnaround_days int, min_words int, max_words int, max_links int,
                  link_type link_type, sponsored_label boolean, deadline_at timestamptz)),
       events_written AS (${eventsInsert('$3', '$2')}),
       ${ledger.postingWith(4)},
       ${recordsWith(13)}
  SELECT 1`,
};

/** The statement that writes the orders and what goes with them (`writeStatement`). */
function writeOrders(rows: Row[], escrow: ledger.Movement[], events: NewEvent[], now: number, records: unknown[]): Statement {
  const named = rows.map(({ p, order: { offer, status, deadline }, id }) => ({
    id,
    workspace_id: p.principal.workspaceId,
    project_id: p.input.project_id ?? null,
    placed_by_key_id: keyIdOf(p.principal),
    placed_by_user_id: isMember(p.principal) ? p.principal.userId : null,
    approval_request_id: p.approved?.requestId ?? null,
    target_url: p.input.target_url,
    anchor_text: p.input.anchor_text ?? null,
    brief: p.input.brief ?? null,
    outlet_id: offer.outlet_id,
    offer_id: offer.id,
    publisher_id: offer.publisher_id,
    status,
    publisher_price_cents: offer.publisher_price_cents,
    fee_cents: offer.fee_cents,
    price: offer.price,
    content_by: offer.content_by,
    turnaround_days: offer.turnaround_days,
    min_words: offer.min_words,
    max_words: offer.max_words,
    max_links: offer.max_links,
    link_type: offer.link_type,
    sponsored_label: offer.sponsored_label,
    deadline_at: deadline,
  }));
  const movements = ledger.posting(escrow);
  // The records' part is numbered after the ledger's nine parameters (`recordsWith(13)`).
  if (movements.length !== 9) throw new Error('the ledger part of orders_place takes another number of parameters');
  return { ...writeStatement, values: [JSON.stringify(named), new Date(now), eventRows(events), ...movements, ...records] };
}

/** The statement that stores the buyer's content of the orders that have some. */
function insertContent(rows: Row[], now: number): Statement {
  const withContent = rows.flatMap((r) => (r.p.content ? [{ id: r.id, content: r.p.content, checks: r.order.checks }] : []));
  return {
    name: 'orders_insert_content',
    text: `INSERT INTO order_contents (order_id, version, title, body, submitted_by, submitted_at, checks)
           SELECT c.id, 1, c.title, c.body, 'buyer', $5, c.checks::jsonb FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[]) AS c(id, title, body, checks)`,
    values: [withContent.map((c) => c.id), withContent.map((c) => c.content.title), withContent.map((c) => c.content.body), withContent.map((c) => JSON.stringify(c.checks)), new Date(now)],
  };
}

function checksFor(content: { title: string; body: string; analysis: ContentAnalysis }, input: PlaceOrdersInput, offer: PlacementOfferRow) {
  const limits = {
    targetUrl: input.target_url,
    anchorText: input.anchor_text ?? null,
    minWords: offer.min_words,
    maxWords: offer.max_words,
    maxLinks: offer.max_links,
  };
  return checkContent(content, limits, content.analysis);
}

/** A new order's row as a read of it would give it, built from what was written. */
function newOrderRow(
  input: PlaceOrdersInput,
  ctx: PlacementContext,
  o: NewOrder,
  id: number,
  now: number,
  content: { title: string; body: string } | undefined,
): OrderRow & { publisher_id: number } {
  const at = new Date(now);
  const f = o.offer;
  return {
    id,
    publisher_id: f.publisher_id,
    status: o.status,
    project_id: input.project_id ?? null,
    price: f.price,
    publisher_price_cents: f.publisher_price_cents,
    target_url: input.target_url,
    anchor_text: input.anchor_text ?? null,
    brief: input.brief ?? null,
    live_url: null,
    live_checks: null,
    live_checked_at: null,
    guarantee_ends_at: null,
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
  };
}
