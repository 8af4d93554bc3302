import type { Db, Statement } from '../../db/handle.js';
import { type Param, param, raw, sql, statement } from '../../db/sql.js';
import type { MemberRole } from '../../common/enums.js';
import { DomainError } from '../errors.js';
import { type ClaimRow, type ClaimsInRead, type ClaimValues, claimsWith, noClaims, type RecordValues, recordsWith } from '../idempotency/record-once.js';
import { eventRows, eventsInsert, type NewEvent } from '../events/record.js';
import type { KeyLimits } from '../keys/budget.js';
import * as ledger from '../ledger/ledger.js';
import type { OfferFormat } from '../outlets/enums.js';
import { type BuyerActor, isMember } from './buyer-actor.js';
import type { ContentCheck } from './content-checks.js';
import type { OrderStatus } from './states.js';

// The statements of a placement and the rows they give and take: the read of every placement's
// context (and, for a group, the lock), the write of the orders with what goes with them, and
// the buyer's content. Nothing here decides anything: placement-rules.ts judges what is read,
// placement-transaction.ts runs the statements in order.

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

export interface PlacementContext extends KeyLimits {
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
const goingOn = (workspaceIds: Param) => sql`ARRAY(SELECT u.w FROM unnest(${workspaceIds}::int[]) WITH ORDINALITY AS u(w, n)
                    LEFT JOIN claimed c ON c.n = u.n WHERE c.claim_admitted IS NOT FALSE)`;

/** The key (columns prefixed `k`: 'k.' or none) has not expired at the time `at`. */
const keyNotExpired = (at: Date, k: 'k.' | '') => sql`(${raw(k)}expires_at IS NULL OR ${raw(k)}expires_at > ${at})`;

/** The columns the lock statement adds, as nulls when the statement only reads. */
const locking = {
  balances: sql`COALESCE((SELECT json_agg(l) FROM locked l WHERE l.workspace_id = r.workspace_id), '[]'::json)`,
  orderIds: sql`CASE WHEN c.claim_admitted IS NOT FALSE THEN ARRAY(SELECT nextval('orders_id_seq') FROM generate_series(1, cardinality(string_to_array(r.offer_ids, ',')))) END`,
  claims: sql`c.claim_ok, c.claim_fingerprint, c.claim_outcome, c.claim_admitted`,
  join: sql`LEFT JOIN claimed c ON c.n = r.n`,
};
const reading = {
  balances: sql`NULL::json`,
  orderIds: sql`NULL::bigint[]`,
  claims: sql`NULL::boolean AS claim_ok, NULL::text AS claim_fingerprint, NULL::text AS claim_outcome, NULL::boolean AS claim_admitted`,
  join: sql``,
};

// What each placement must know besides the balance: the key still valid at the time of the
// placement (not revoked, not expired: the request may have waited past its expiry), or the
// person's role, the project the workspace's own, the approval limit and currency, and the
// requested offers (given as text, "1,2,3": one row per placement). A placement also locks the
// balance rows and reads them in the same statement (`lock`: one round trip fewer); the rest is
// then read as at the statement's start, before any wait for the lock (at most the group's lock
// timeout, or the statement's). Locking, it also takes the ids of the orders each placement would
// make (one per offer) from the orders' sequence, so the orders, their ledger movements and their
// events are written together by one statement (`writeOrders`). A placement then refused leaves
// its ids unused: a gap in the sequence, as a rolled-back placement always left. For a group, the
// same statement claims the placements' keys and looks up their records (`claimsWith`; none for
// a placement alone, already claimed by `recordOnce`): one round trip fewer.
function contextsStatement(placements: ContextRead[], now: number, claims: ClaimValues | undefined) {
  const workspaceIds = param(placements.map((p) => p.principal.workspaceId));
  return sql`${claims ? sql`WITH ${claimsWith(claims)},\n  ${ledger.balanceLock(goingOn(workspaceIds))}\n` : sql``}SELECT
         k.revoked_at IS NULL AND k.can_place_orders AND ${keyNotExpired(new Date(now), 'k.')} AS key_ok, k.needs_approval,
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
         ${claims ? locking.balances : reading.balances} AS balances,
         ${claims ? locking.orderIds : reading.orderIds} AS order_ids,
         ${claims ? locking.claims : reading.claims}
    FROM unnest(${placements.map((p) => keyIdOf(p.principal))}::int[], ${workspaceIds}::int[], ${placements.map((p) => p.input.project_id ?? null)}::int[],
                ${placements.map((p) => p.input.offer_ids.join(','))}::text[], ${placements.map((p) => (isMember(p.principal) ? p.principal.userId : null))}::int[])
           WITH ORDINALITY AS r(key_id, workspace_id, project_id, offer_ids, user_id, n)
    JOIN workspaces w ON w.id = r.workspace_id JOIN fx_rates fx ON fx.currency = w.currency
    LEFT JOIN api_keys k ON k.id = r.key_id
    ${claims ? locking.join : reading.join}
   ORDER BY r.n`;
}

/** `order_ids` as bigint[] arrives as text (only the single INT8 is parsed as a number). */
export type ContextRow = PlacementContext & ClaimRow & { balances: ledger.BalanceRow[] | null; order_ids: string[] | null };

/** What the context read needs of a placement: who places, where, and which offers. */
export interface ContextRead {
  principal: BuyerActor;
  input: { offer_ids: number[]; project_id?: number | undefined };
}

/** The placements' contexts; locking, the balances and new order ids too, and the claims given. */
export async function readContexts(q: Db, placements: ContextRead[], now: number, lock?: { claims: ClaimsInRead | undefined }): Promise<ContextRow[]> {
  const claims = lock ? (lock.claims?.values() ?? noClaims()) : undefined;
  const { rows } = await q.query<ContextRow>(statement(contextsStatement(placements, now, claims), lock ? 'orders_placement_lock_contexts' : 'orders_placement_contexts'));
  if (rows.length !== placements.length) throw new Error('a placement has no workspace or currency');
  return rows;
}

export const keyIdOf = (p: BuyerActor) => (isMember(p) ? null : p.keyId);

/** One new order as the write statement takes it: one element of its JSON parameter, by name. */
export interface OrderRecord {
  id: number;
  workspace_id: number;
  project_id: number | null;
  placed_by_key_id: number | null;
  placed_by_user_id: number | null;
  approval_request_id: number | null;
  target_url: string;
  anchor_text: string | null;
  brief: string | null;
  outlet_id: number;
  offer_id: number;
  publisher_id: number;
  status: OrderStatus;
  publisher_price_cents: number;
  fee_cents: number;
  price: number;
  content_by: 'buyer' | 'publisher';
  turnaround_days: number;
  min_words: number;
  max_words: number;
  max_links: number;
  link_type: 'dofollow' | 'nofollow';
  sponsored_label: boolean;
  deadline_at: Date;
}

// The orders (their ids taken already, by the lock statement), their escrow movements, both
// parties' `order.placed` events and a group's records of its outcomes, in one statement of
// data-modifying WITH queries, each written by the module that owns the table
// (`ledger.postingWith`, `eventsInsert`, `recordsWith`). The parts see none of each
// other's rows and need not: every id is known before, and the foreign keys (a ledger
// transaction's order) are checked at the end of the statement, as the balance CHECK is. A key
// that holds a live record fails it (`records_written`), and the group with it. The orders are
// one JSON parameter of named fields; the time is one parameter, wherever it is written.

/**
 * The statement that writes the orders and what goes with them; `records` are a group's
 * (`RecordsInWrite.values`, or `noRecords()` outside one).
 */
export function writeOrders(orders: OrderRecord[], escrow: ledger.Movement[], events: NewEvent[], now: number, records: RecordValues): Statement {
  const at = param(new Date(now));
  return statement(
    sql`WITH orders_written AS (
         INSERT INTO orders (id, workspace_id, project_id, placed_by_key_id, placed_by_user_id, approval_request_id, target_url, anchor_text, brief,
           outlet_id, offer_id, publisher_id, status, publisher_price_cents, fee_cents, price, content_by, turnaround_days,
           min_words, max_words, max_links, link_type, sponsored_label, deadline_at, state_entered_at, created_at, updated_at)
         SELECT t.id, t.workspace_id, t.project_id, t.placed_by_key_id, t.placed_by_user_id, t.approval_request_id, t.target_url, t.anchor_text, t.brief,
                t.outlet_id, t.offer_id, t.publisher_id, t.status, t.publisher_price_cents, t.fee_cents, t.price, t.content_by,
                t.turnaround_days, t.min_words, t.max_words, t.max_links, t.link_type, t.sponsored_label, t.deadline_at, ${at}, ${at}, ${at}
           FROM json_to_recordset(${JSON.stringify(orders)}::json) AS t(
                  id bigint, workspace_id int, project_id int, placed_by_key_id int, placed_by_user_id int, approval_request_id bigint, target_url text, anchor_text text,
                  brief text, outlet_id int, offer_id int, publisher_id int, status order_status, publisher_price_cents bigint,
                  fee_cents bigint, price bigint, content_by content_by, turnaround_days int, min_words int, max_words int, max_links int,
                  link_type link_type, sponsored_label boolean, deadline_at timestamptz)),
       events_written AS (${eventsInsert(eventRows(events), at)}),
       ${ledger.postingWith(ledger.posting(escrow))},
       ${recordsWith(records)}
  SELECT 1`,
    'orders_place',
  );
}

/** The buyer's content of one new order, with what the checks found in it. */
export interface NewContent {
  id: number;
  title: string;
  body: string;
  checks: ContentCheck[] | null;
}

/** The statement that stores the buyer's content of the orders that have some. */
export function insertContent(contents: NewContent[], now: number): Statement {
  return statement(
    sql`INSERT INTO order_contents (order_id, version, title, body, submitted_by, submitted_at, checks)
           SELECT c.id, 1, c.title, c.body, 'buyer', ${new Date(now)}, c.checks::jsonb
             FROM unnest(${contents.map((c) => c.id)}::bigint[], ${contents.map((c) => c.title)}::text[], ${contents.map((c) => c.body)}::text[], ${contents.map((c) => JSON.stringify(c.checks))}::text[]) AS c(id, title, body, checks)`,
    'orders_insert_content',
  );
}

/**
 * A spending key must still be valid inside the transaction that spends: the cache may lag 5 s
 * behind a revocation, and a request may have waited past the key's expiry.
 */
export async function recheckSpendingKey(tx: Db, keyId: number, now: number): Promise<{ needsApproval: boolean }> {
  const { rows } = await tx.query<{ ok: boolean; needs_approval: boolean }>(
    statement(sql`SELECT (revoked_at IS NULL AND can_place_orders AND ${keyNotExpired(new Date(now), '')}) AS ok, needs_approval FROM api_keys WHERE id = ${keyId}`, 'key_recheck_spending'),
  );
  if (!rows[0]?.ok) throw new DomainError('unauthenticated', 'This key has been revoked or has expired.');
  return { needsApproval: rows[0].needs_approval };
}
