import { isoSeconds } from '../../common/iso-seconds.js';
import type { Db } from '../../db/handle.js';
import { notFound } from '../errors.js';
import type { AdjustmentView } from './adjustments.js';
import { normalReference } from './reference.js';
import { TOP_UP_COLUMNS, TOP_UP_JOINS, type OpsTopUpView, opsTopUpView, type TopUpRow, usd } from './top-up-view.js';

// What the operations console reads (docs/billing.md): the top-ups waiting, workspaces and
// publishers found by name or id with their balances, and what staff did, with who did it. Amounts
// are US dollars, the ledger's currency. Nothing here reads a key, a member or an order's content:
// staff run the money, they are not members of the workspaces they look at. The console shows
// these pages to staff only; each staff action checks again in its own transaction.

/** At most this many rows of any list (a search's matches, a workspace's requests, recent actions). */
const LIMIT = 50;

export interface WorkspaceBalances {
  id: number;
  name: string;
  currency: string;
  available: number;
  available_formatted: string;
  held: number;
  held_formatted: string;
}

export interface PublisherBalances {
  id: number;
  name: string;
  pending: number;
  pending_formatted: string;
  payable: number;
  payable_formatted: string;
  in_payout: number;
  in_payout_formatted: string;
}

const WORKSPACE_BALANCES = `SELECT w.id, w.name, w.currency::text AS currency,
       COALESCE((SELECT balance FROM ledger_accounts WHERE workspace_id = w.id AND kind = 'available'), 0)::bigint AS available,
       COALESCE((SELECT balance FROM ledger_accounts WHERE workspace_id = w.id AND kind = 'held'), 0)::bigint AS held
  FROM workspaces w`;
const PUBLISHER_BALANCES = `SELECT p.id, p.name,
       COALESCE((SELECT balance FROM ledger_accounts WHERE publisher_id = p.id AND kind = 'pending'), 0)::bigint AS pending,
       COALESCE((SELECT balance FROM ledger_accounts WHERE publisher_id = p.id AND kind = 'payable'), 0)::bigint AS payable,
       COALESCE((SELECT balance FROM ledger_accounts WHERE publisher_id = p.id AND kind = 'in_payout'), 0)::bigint AS in_payout
  FROM publishers p`;

type WorkspaceRow = { id: number; name: string; currency: string; available: number; held: number };
type PublisherRow = { id: number; name: string; pending: number; payable: number; in_payout: number };

const workspaceBalances = (r: WorkspaceRow): WorkspaceBalances => ({ ...r, available_formatted: usd(r.available), held_formatted: usd(r.held) });
const publisherBalances = (r: PublisherRow): PublisherBalances => ({ ...r, pending_formatted: usd(r.pending), payable_formatted: usd(r.payable), in_payout_formatted: usd(r.in_payout) });

/** The requests waiting for money, oldest first: the staff's queue. */
export async function pendingTopUps(db: Db, baseUrl: string): Promise<OpsTopUpView[]> {
  const { rows } = await db.query<TopUpRow>({
    name: 'ops_top_ups_pending',
    text: `SELECT ${TOP_UP_COLUMNS} FROM top_up_requests t ${TOP_UP_JOINS} WHERE t.status = 'pending' ORDER BY t.id LIMIT ${LIMIT}`,
  });
  return rows.map((r) => opsTopUpView(r, baseUrl));
}

export interface Found {
  workspaces: WorkspaceBalances[];
  publishers: PublisherBalances[];
  /** The request a reference names, when the search was one ("tu-7kq4 m2xd" too). */
  topUp: OpsTopUpView | null;
}

/**
 * Workspaces and publishers whose id is `q` or whose name contains it (any case), exact ids
 * first; and the top-up request `q` names as a reference. A scan of the names: the operator's
 * accounts number in the thousands, not millions.
 */
export async function findAccounts(db: Db, q: string, baseUrl: string): Promise<Found> {
  const text = q.trim().slice(0, 200);
  if (text === '') return { workspaces: [], publishers: [], topUp: null };
  const id = /^[1-9][0-9]{0,9}$/.test(text) && Number(text) <= 2_147_483_647 ? Number(text) : null;
  const reference = normalReference(text);
  const [ws, ps, tu] = await Promise.all([
    db.query<WorkspaceRow>({
      name: 'ops_find_workspaces',
      text: `${WORKSPACE_BALANCES} WHERE w.id = $1 OR strpos(lower(w.name), lower($2)) > 0 ORDER BY COALESCE(w.id = $1, false) DESC, lower(w.name), w.id LIMIT ${LIMIT}`,
      values: [id, text],
    }),
    db.query<PublisherRow>({
      name: 'ops_find_publishers',
      text: `${PUBLISHER_BALANCES} WHERE p.id = $1 OR strpos(lower(p.name), lower($2)) > 0 ORDER BY COALESCE(p.id = $1, false) DESC, lower(p.name), p.id LIMIT ${LIMIT}`,
      values: [id, text],
    }),
    reference
      ? db.query<TopUpRow>({ name: 'ops_find_top_up', text: `SELECT ${TOP_UP_COLUMNS} FROM top_up_requests t ${TOP_UP_JOINS} WHERE t.reference = $1`, values: [reference] })
      : Promise.resolve({ rows: [] as TopUpRow[] }),
  ]);
  return {
    workspaces: ws.rows.map(workspaceBalances),
    publishers: ps.rows.map(publisherBalances),
    topUp: tu.rows[0] ? opsTopUpView(tu.rows[0], baseUrl) : null,
  };
}

/** One request, whichever workspace's. */
export async function opsTopUp(db: Db, id: number, baseUrl: string): Promise<OpsTopUpView> {
  const { rows } = await db.query<TopUpRow>({
    name: 'ops_top_up',
    text: `SELECT ${TOP_UP_COLUMNS} FROM top_up_requests t ${TOP_UP_JOINS} WHERE t.id = $1`,
    values: [id],
  });
  if (!rows[0]) throw notFound('Top-up');
  return opsTopUpView(rows[0], baseUrl);
}

/** An adjustment as the operations console lists it: the view without the workspace it is listed under. */
export type AdjustmentLine = Omit<AdjustmentView, 'workspace_id' | 'balance_cents'>;

/** A workspace as staff see it: its balances, its latest requests and adjustments. */
export async function opsWorkspace(db: Db, id: number, baseUrl: string) {
  const [ws, topUps, adjustments] = await Promise.all([
    db.query<WorkspaceRow>({ name: 'ops_workspace', text: `${WORKSPACE_BALANCES} WHERE w.id = $1`, values: [id] }),
    db.query<TopUpRow>({
      name: 'ops_workspace_top_ups',
      text: `SELECT ${TOP_UP_COLUMNS} FROM top_up_requests t ${TOP_UP_JOINS} WHERE t.workspace_id = $1 ORDER BY t.id DESC LIMIT ${LIMIT}`,
      values: [id],
    }),
    db.query<{ id: number; amount_cents: number; reason: string; staff_user_id: number; staff_name: string; ledger_transaction_id: number; created_at: Date }>({
      name: 'ops_workspace_adjustments',
      text: `SELECT a.id, a.amount_cents, a.reason, a.staff_user_id, u.name AS staff_name, a.ledger_transaction_id, a.created_at
               FROM ledger_adjustments a JOIN users u ON u.id = a.staff_user_id
              WHERE a.workspace_id = $1 ORDER BY a.id DESC LIMIT ${LIMIT}`,
      values: [id],
    }),
  ]);
  if (!ws.rows[0]) throw notFound('Workspace');
  return {
    workspace: workspaceBalances(ws.rows[0]),
    topUps: topUps.rows.map((r) => opsTopUpView(r, baseUrl)),
    adjustments: adjustments.rows.map(
      (a): AdjustmentLine => ({
        id: a.id,
        amount_cents: a.amount_cents,
        amount_formatted: usd(a.amount_cents),
        reason: a.reason,
        staff: { user_id: a.staff_user_id, name: a.staff_name },
        ledger_transaction_id: a.ledger_transaction_id,
        created_at: isoSeconds(a.created_at),
      }),
    ),
  };
}

/** A publisher as staff see it: its balances (payouts come with them, docs/billing.md). */
export async function opsPublisher(db: Db, id: number): Promise<PublisherBalances> {
  const { rows } = await db.query<PublisherRow>({ name: 'ops_publisher', text: `${PUBLISHER_BALANCES} WHERE p.id = $1`, values: [id] });
  if (!rows[0]) throw notFound('Publisher');
  return publisherBalances(rows[0]);
}

export interface StaffAction {
  /** confirmed, rejected (a top-up), adjusted (a workspace's balance), sent or failed (a payout). */
  action: 'confirmed' | 'rejected' | 'adjusted' | 'sent' | 'failed';
  at: string;
  staff: { user_id: number; name: string };
  /** The workspace acted on (top-ups, adjustments), or null for a publisher's payout. */
  workspace: { id: number; name: string } | null;
  publisher: { id: number; name: string } | null;
  amount_cents: number;
  amount_formatted: string;
  top_up: { id: number; reference: string } | null;
  payout: { id: number; reference: string } | null;
  reason: string | null;
}

/** What staff did last, newest first, each with who did it. */
export async function staffActions(db: Db): Promise<StaffAction[]> {
  const { rows } = await db.query<{
    action: StaffAction['action'];
    at: Date;
    user_id: number;
    user_name: string;
    workspace_id: number | null;
    workspace_name: string | null;
    publisher_id: number | null;
    publisher_name: string | null;
    amount_cents: number;
    top_up_id: number | null;
    payout_id: number | null;
    reference: string | null;
    reason: string | null;
  }>({
    name: 'ops_staff_actions',
    text: `SELECT * FROM (
             (SELECT t.status::text AS action, t.decided_at AS at, t.decided_by_user_id AS user_id, u.name AS user_name, t.workspace_id, w.name AS workspace_name,
                     NULL::int AS publisher_id, NULL::text AS publisher_name,
                     COALESCE(t.received_cents, t.amount_cents) AS amount_cents, t.id AS top_up_id, NULL::bigint AS payout_id, t.reference, t.reject_reason AS reason
                FROM top_up_requests t JOIN users u ON u.id = t.decided_by_user_id JOIN workspaces w ON w.id = t.workspace_id
               WHERE t.status IN ('confirmed', 'rejected') ORDER BY t.decided_at DESC LIMIT ${LIMIT})
             UNION ALL
             (SELECT 'adjusted', a.created_at, a.staff_user_id, u.name, a.workspace_id, w.name, NULL::int, NULL::text, a.amount_cents, NULL::bigint, NULL::bigint, NULL::text, a.reason
                FROM ledger_adjustments a JOIN users u ON u.id = a.staff_user_id JOIN workspaces w ON w.id = a.workspace_id
               ORDER BY a.id DESC LIMIT ${LIMIT})
             UNION ALL
             (SELECT p.status::text, p.decided_at, p.decided_by_user_id, u.name, NULL::int, NULL::text, p.publisher_id, pub.name, p.amount_cents, NULL::bigint, p.id, p.reference, p.failure_reason
                FROM payouts p JOIN users u ON u.id = p.decided_by_user_id JOIN publishers pub ON pub.id = p.publisher_id
               WHERE p.status IN ('sent', 'failed') ORDER BY p.decided_at DESC LIMIT ${LIMIT})
           ) s ORDER BY at DESC LIMIT ${LIMIT}`,
  });
  return rows.map((r) => ({
    action: r.action,
    at: isoSeconds(r.at),
    staff: { user_id: r.user_id, name: r.user_name },
    workspace: r.workspace_id !== null ? { id: r.workspace_id, name: r.workspace_name ?? '' } : null,
    publisher: r.publisher_id !== null ? { id: r.publisher_id, name: r.publisher_name ?? '' } : null,
    amount_cents: r.amount_cents,
    amount_formatted: usd(r.amount_cents),
    top_up: r.top_up_id !== null && r.reference !== null ? { id: r.top_up_id, reference: r.reference } : null,
    payout: r.payout_id !== null && r.reference !== null ? { id: r.payout_id, reference: r.reference } : null,
    reason: r.reason,
  }));
}
