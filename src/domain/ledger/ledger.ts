import type { Db } from '../../db/handle.js';
import { type Sql, sql, statement } from '../../db/sql.js';

/**
 * The ledger's one writer and its posting rules. Every balance change in the code base is a
 * movement built by a rule below and written by `post`, or by `postingWith` as a part of the
 * statement that makes the change (placement's escrow), in the transaction of the state change
 * it pays for: balanced transactions, their entries and the balance rows, together.
 */

export type AccountKind = 'available' | 'held' | 'pending' | 'payable' | 'in_payout' | 'fees' | 'external' | 'adjustments';
export type TransactionKind =
  | 'top_up'
  | 'order_placed'
  | 'order_released'
  | 'order_refunded'
  | 'payout_released'
  | 'guarantee_refunded'
  | 'adjustment'
  | 'payout_requested'
  | 'payout_sent'
  | 'payout_failed'
  | 'opening_balance';

export interface Posting {
  accountId: number;
  kind: AccountKind;
  amount: number;
}

export interface Movement {
  kind: TransactionKind;
  orderId: number | null;
  workspaceId: number | null;
  postings: Posting[];
}

/** A workspace's two balance rows, locked in the caller's transaction, and what is available. */
export interface WorkspaceAccounts {
  workspaceId: number;
  available: number;
  held: number;
  availableBalance: number;
}

// ---- Posting rules ----------------------------------------------------------------------------

/** Money entering the system: external → the workspace's available balance. */
export const topUp = (w: WorkspaceAccounts, external: number, cents: number): Movement => ({
  kind: 'top_up',
  orderId: null,
  workspaceId: w.workspaceId,
  postings: [
    { accountId: w.available, kind: 'available', amount: cents },
    { accountId: external, kind: 'external', amount: -cents },
  ],
});

/**
 * A staff adjustment (docs/billing.md): the workspace's available balance credited (cents > 0) or
 * debited (cents < 0), against the platform's `adjustments` account, so every adjustment ever made
 * is that account's balance, apart from the money that really came in (external).
 */
export const adjustment = (w: WorkspaceAccounts, adjustments: number, cents: number): Movement => ({
  kind: 'adjustment',
  orderId: null,
  workspaceId: w.workspaceId,
  postings: [
    { accountId: w.available, kind: 'available', amount: cents },
    { accountId: adjustments, kind: 'adjustments', amount: -cents },
  ],
});

/** Placing an order: its price moves from available into escrow (held). */
export const escrow = (w: WorkspaceAccounts, order: { id: number; price: number }): Movement => ({
  kind: 'order_placed',
  orderId: order.id,
  workspaceId: w.workspaceId,
  postings: [
    { accountId: w.available, kind: 'available', amount: -order.price },
    { accountId: w.held, kind: 'held', amount: order.price },
  ],
});

/** Declined, expired or cancelled: held → available at the frozen price. */
export const refund = (w: WorkspaceAccounts, order: { id: number; price: number }): Movement => ({
  kind: 'order_refunded',
  orderId: order.id,
  workspaceId: w.workspaceId,
  postings: [
    { accountId: w.held, kind: 'held', amount: -order.price },
    { accountId: w.available, kind: 'available', amount: order.price },
  ],
});

type FrozenAmounts = { id: number; price: number; publisher_price_cents: number; fee_cents: number };

/**
 * An approved placement: held → the publisher's pending + platform fees, at the frozen amounts.
 * Pending, not payable: the link guarantee can still refund it (docs/link-guarantee.md).
 */
export const release = (w: WorkspaceAccounts, order: FrozenAmounts, pending: number, fees: number): Movement => ({
  kind: 'order_released',
  orderId: order.id,
  workspaceId: w.workspaceId,
  postings: [
    { accountId: w.held, kind: 'held', amount: -order.price },
    { accountId: pending, kind: 'pending', amount: order.publisher_price_cents },
    ...(order.fee_cents > 0 ? [{ accountId: fees, kind: 'fees' as const, amount: order.fee_cents }] : []),
  ],
});

/** The guarantee window ended with the link alive: the publisher's pending → payable. */
export const payout = (order: FrozenAmounts & { workspace_id: number }, pending: number, payable: number): Movement => ({
  kind: 'payout_released',
  orderId: order.id,
  workspaceId: order.workspace_id,
  postings: [
    { accountId: pending, kind: 'pending', amount: -order.publisher_price_cents },
    { accountId: payable, kind: 'payable', amount: order.publisher_price_cents },
  ],
});

/** A lost link not restored in time: pending + fees → the buyer's available, the full price. */
export const guaranteeRefund = (w: WorkspaceAccounts, order: FrozenAmounts, pending: number, fees: number): Movement => ({
  kind: 'guarantee_refunded',
  orderId: order.id,
  workspaceId: w.workspaceId,
  postings: [
    { accountId: w.available, kind: 'available', amount: order.price },
    { accountId: pending, kind: 'pending', amount: -order.publisher_price_cents },
    ...(order.fee_cents > 0 ? [{ accountId: fees, kind: 'fees' as const, amount: -order.fee_cents }] : []),
  ],
});

/** A publisher's accounts a payout moves between (docs/billing.md, "Payouts"). */
export interface PayoutAccounts {
  payable: number;
  inPayout: number;
}

/** A payout asked for: the publisher's payable → in_payout, so it cannot be asked for twice. */
export const payoutRequested = (a: PayoutAccounts, cents: number): Movement => ({
  kind: 'payout_requested',
  orderId: null,
  workspaceId: null,
  postings: [
    { accountId: a.payable, kind: 'payable', amount: -cents },
    { accountId: a.inPayout, kind: 'in_payout', amount: cents },
  ],
});

/** A payout sent: in_payout → external (the money left the service). */
export const payoutSent = (a: PayoutAccounts, external: number, cents: number): Movement => ({
  kind: 'payout_sent',
  orderId: null,
  workspaceId: null,
  postings: [
    { accountId: a.inPayout, kind: 'in_payout', amount: -cents },
    { accountId: external, kind: 'external', amount: cents },
  ],
});

/** A payout failed: in_payout → payable, the money the publisher's again. */
export const payoutFailed = (a: PayoutAccounts, cents: number): Movement => ({
  kind: 'payout_failed',
  orderId: null,
  workspaceId: null,
  postings: [
    { accountId: a.inPayout, kind: 'in_payout', amount: -cents },
    { accountId: a.payable, kind: 'payable', amount: cents },
  ],
});

/** A publisher's payable balance from outside the service (the demo publisher's earnings before the demo): external → payable. */
export const openingPayable = (payable: number, external: number, cents: number): Movement => ({
  kind: 'opening_balance',
  orderId: null,
  workspaceId: null,
  postings: [
    { accountId: payable, kind: 'payable', amount: cents },
    { accountId: external, kind: 'external', amount: -cents },
  ],
});

// ---- Locks and accounts -----------------------------------------------------------------------

/**
 * Locks a workspace's balance rows (available, then held: the documented lock order) in the
 * caller's transaction. Every spend of a workspace takes this lock first, so two never overlap.
 */
export async function lockWorkspace(tx: Db, workspaceId: number): Promise<WorkspaceAccounts> {
  const { rows } = await tx.query<{ id: number; kind: 'available' | 'held'; balance: number }>({
    name: 'ledger_lock_workspace',
    text: `SELECT id, kind, balance FROM ledger_accounts WHERE workspace_id = $1 AND kind IN ('available', 'held') ORDER BY kind FOR UPDATE`,
    values: [workspaceId],
  });
  const available = rows.find((r) => r.kind === 'available');
  const held = rows.find((r) => r.kind === 'held');
  if (!available || !held) throw new Error(`workspace ${workspaceId} has no ledger accounts`);
  return { workspaceId, available: available.id, held: held.id, availableBalance: available.balance };
}

/**
 * The lock of several workspaces' balance rows, as the WITH query `locked` of a caller's
 * statement that also reads what it needs under the lock (one round trip): `ids` is the
 * statement's expression for the workspace ids (an int[]: a parameter, or a subquery of it). The
 * rows are locked in the documented lock order between workspaces (by id), so two callers never
 * wait for each other in opposite orders; MATERIALIZED so the whole lock is taken the first time
 * the statement reads `locked`.
 */
export const balanceLock = (ids: Sql) =>
  sql`locked AS MATERIALIZED (SELECT id, workspace_id, kind, balance FROM ledger_accounts
      WHERE workspace_id = ANY(${ids}) AND kind IN ('available', 'held') ORDER BY workspace_id, kind FOR UPDATE)`;

export interface BalanceRow {
  id: number;
  workspace_id: number;
  kind: 'available' | 'held';
  balance: number;
}

/** The accounts of each workspace from the rows `balanceLock` locked. */
export function lockedAccounts(workspaceIds: number[], rows: BalanceRow[]): Map<number, WorkspaceAccounts> {
  return new Map(
    [...new Set(workspaceIds)].map((workspaceId) => {
      const available = rows.find((r) => r.workspace_id === workspaceId && r.kind === 'available');
      const held = rows.find((r) => r.workspace_id === workspaceId && r.kind === 'held');
      if (!available || !held) throw new Error(`workspace ${workspaceId} has no ledger accounts`);
      return [workspaceId, { workspaceId, available: available.id, held: held.id, availableBalance: available.balance }];
    }),
  );
}

/** A publisher's two accounts: pending (still under the link guarantee) and payable. */
export async function publisherAccounts(tx: Db, publisherId: number): Promise<{ pending: number; payable: number }> {
  const { rows } = await tx.query<{ id: number; kind: 'pending' | 'payable' }>({
    name: 'ledger_publisher_accounts',
    text: `SELECT id, kind FROM ledger_accounts WHERE publisher_id = $1 AND kind IN ('pending', 'payable')`,
    values: [publisherId],
  });
  const pending = rows.find((r) => r.kind === 'pending');
  const payable = rows.find((r) => r.kind === 'payable');
  if (!pending || !payable) throw new Error(`publisher ${publisherId} has no pending and payable accounts`);
  return { pending: pending.id, payable: payable.id };
}

export async function platformAccount(tx: Db, kind: 'fees' | 'external' | 'adjustments'): Promise<number> {
  const { rows } = await tx.query<{ id: number }>({
    name: 'ledger_platform',
    text: `SELECT id FROM ledger_accounts WHERE kind = $1 AND workspace_id IS NULL AND publisher_id IS NULL`,
    values: [kind],
  });
  if (!rows[0]) throw new Error(`platform account ${kind} is missing; migrations not applied?`);
  return rows[0].id;
}

// ---- The writer -------------------------------------------------------------------------------

// Balance rows are updated in this order (workspace rows, then publisher, then platform) — the
// documented lock order — so two movements never wait on each other in opposite orders.
const KIND_ORDER: Record<AccountKind, number> = { available: 0, held: 1, pending: 2, payable: 3, in_payout: 4, fees: 5, external: 6, adjustments: 7 };

// The transactions, their entries and the workspace's own balance rows, as WITH queries of one
// statement: `post`'s own, or a caller's that writes the change they pay for in the same round
// trip (its values from `posting`). The rows are already locked (`lockWorkspace`,
// `balanceLock`), so it takes no new lock. The entries find their transaction by (kind,
// order_id), which UNIQUE (order_id, kind) makes one.
export const postingWith = (v: PostingValues) => sql`ledger_m AS (SELECT * FROM unnest(${v.kinds}::ledger_transaction_kind[], ${v.orderIds}::bigint[], ${v.workspaceIds}::int[], ${v.ns}::int[]) AS m(kind, order_id, workspace_id, n)),
  ledger_t AS (INSERT INTO ledger_transactions (kind, order_id, workspace_id)
        SELECT kind, order_id, workspace_id FROM ledger_m ORDER BY n RETURNING id, kind, order_id),
  ledger_e AS (INSERT INTO ledger_entries (transaction_id, account_id, amount)
        SELECT t.id, p.account_id, p.amount
          FROM unnest(${v.entryNs}::int[], ${v.entryAccounts}::int[], ${v.entryAmounts}::bigint[]) AS p(n, account_id, amount)
          JOIN ledger_m m ON m.n = p.n JOIN ledger_t t ON t.kind = m.kind AND t.order_id IS NOT DISTINCT FROM m.order_id),
  ledger_b AS (UPDATE ledger_accounts a SET balance = a.balance + d.delta
    FROM unnest(${v.deltaAccounts}::int[], ${v.deltas}::bigint[]) AS d(id, delta) WHERE a.id = d.id)`;

/** The movements as the arrays `postingWith` binds: one element per movement, posting or changed account. */
export interface PostingValues {
  kinds: TransactionKind[];
  orderIds: Array<number | null>;
  workspaceIds: Array<number | null>;
  ns: number[];
  entryNs: number[];
  entryAccounts: number[];
  entryAmounts: number[];
  deltaAccounts: number[];
  deltas: number[];
}

type Delta = { kind: AccountKind; amount: number };

/**
 * Checks movements (each balanced, in safe integers, none twice) and turns them into the
 * values of `postingWith` and the changes of other accounts than the workspace's own, which
 * `post` applies one at a time.
 */
function prepare(movements: Movement[]): { values: PostingValues; others: Array<[number, Delta]> } {
  const seen = new Set<string>();
  for (const m of movements) {
    const sum = m.postings.reduce((s, p) => s + p.amount, 0);
    if (sum !== 0 || m.postings.some((p) => !Number.isSafeInteger(p.amount) || p.amount === 0)) {
      throw new Error(`unbalanced ledger movement ${m.kind}`);
    }
    const id = `${m.kind}:${m.orderId}`;
    if (seen.has(id)) throw new Error(`duplicate ledger movement ${id}`);
    seen.add(id);
  }
  const postings = movements.flatMap((m, n) => m.postings.map((p) => ({ n, ...p })));
  const deltas = new Map<number, Delta>();
  for (const p of postings) {
    const d = deltas.get(p.accountId) ?? { kind: p.kind, amount: 0 };
    d.amount += p.amount;
    deltas.set(p.accountId, d);
  }
  const all = [...deltas.entries()].filter(([, d]) => d.amount !== 0);
  const own = all.filter(([, d]) => d.kind === 'available' || d.kind === 'held');
  const others = all
    .filter(([, d]) => d.kind !== 'available' && d.kind !== 'held')
    .sort(([ia, a], [ib, b]) => KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || ia - ib);
  const values: PostingValues = {
    kinds: movements.map((m) => m.kind),
    orderIds: movements.map((m) => m.orderId),
    workspaceIds: movements.map((m) => m.workspaceId),
    ns: movements.map((_, n) => n),
    entryNs: postings.map((p) => p.n),
    entryAccounts: postings.map((p) => p.accountId),
    entryAmounts: postings.map((p) => p.amount),
    deltaAccounts: own.map(([id]) => id),
    deltas: own.map(([, d]) => d.amount),
  };
  return { values, others };
}

/**
 * Writes balanced movements and applies them to the balance rows, in the caller's transaction.
 * The workspace's rows must be locked already (`lockWorkspace`); publisher and platform rows
 * follow, one at a time in the documented lock order. UNIQUE (order_id, kind) rejects a second
 * placement, release or refund of an order; the balance CHECK rejects an overdraft. Answers the
 * ids of the ledger transactions written, in the order of `movements` (a top-up request or an
 * adjustment keeps its own).
 */
export async function post(tx: Db, movements: Movement[]): Promise<number[]> {
  if (movements.length === 0) return [];
  const { values, others } = prepare(movements);
  // Answers the new transactions' ids, in the order of the movements.
  const { rows } = await tx.query<{ id: number }>(statement(sql`WITH ${postingWith(values)}\nSELECT id FROM ledger_t ORDER BY id`, 'ledger_post'));
  for (const [accountId, d] of others) {
    await tx.query({
      name: 'ledger_apply',
      text: 'UPDATE ledger_accounts SET balance = balance + $2 WHERE id = $1',
      values: [accountId, d.amount],
    });
  }
  return rows.map((r) => r.id);
}

/**
 * The values of `postingWith` for movements written by a caller's statement, checked as `post`
 * checks them. Only movements between workspace accounts the caller
 * has locked (escrow on placement): a publisher's or the platform's row is locked and changed one
 * at a time, in the lock order, by `post` alone.
 */
export function posting(movements: Movement[]): PostingValues {
  const { values, others } = prepare(movements);
  if (others.length > 0) throw new Error('a movement of publisher or platform accounts goes through post');
  return values;
}
