import type pg from 'pg';
import type { Db } from '../../db/handle.js';
import { gatheredReads } from '../../db/gathered-reads.js';
import { DomainError } from '../errors.js';
import { budgetView, hasSpendLimits, readSpent } from '../keys/budget.js';
import type { WorkspacePrincipal } from '../keys/principal.js';
import { formatCents } from '../money/format.js';
import type { WorkspaceSettingsCache } from './settings-cache.js';

// /me is the hottest read: the settings come from a 5-second per-process cache, so a request
// costs one prepared statement, the two balances, shared with concurrent requests (balancesOf).
const balancesStatement = {
  name: 'workspace_balances',
  text: `SELECT kind, balance FROM ledger_accounts WHERE workspace_id = $1`,
};
// Several workspaces' balances in one statement (the reads of concurrent requests, gathered).
const manyBalancesStatement = {
  name: 'workspaces_balances',
  text: `SELECT workspace_id, kind, balance FROM ledger_accounts WHERE workspace_id = ANY($1) AND kind IN ('available', 'held')`,
};

interface Balances {
  available: number;
  held: number;
}

async function readBalances(pool: Db, workspaceIds: number[]): Promise<Balances[]> {
  const byWorkspace = new Map<number, Balances>(workspaceIds.map((id) => [id, { available: 0, held: 0 }]));
  const put = (id: number, kind: string, balance: number) => {
    const b = byWorkspace.get(id)!;
    if (kind === 'available') b.available = balance;
    else if (kind === 'held') b.held = balance;
  };
  if (workspaceIds.length === 1) {
    const { rows } = await pool.query<{ kind: string; balance: number }>({ ...balancesStatement, values: workspaceIds });
    for (const row of rows) put(workspaceIds[0]!, row.kind, row.balance);
  } else {
    const { rows } = await pool.query<{ workspace_id: number; kind: string; balance: number }>({ ...manyBalancesStatement, values: [[...byWorkspace.keys()]] });
    for (const row of rows) put(row.workspace_id, row.kind, row.balance);
  }
  return workspaceIds.map((id) => ({ ...byWorkspace.get(id)! }));
}

/** A workspace's two balances, read with those of concurrent requests. */
export type BalanceReader = (workspaceId: number) => Promise<Balances>;

/**
 * Balance reads of concurrent requests share queries (`gatheredReads`): one reader for a pool,
 * made by whoever owns the pool (the workspaces module) so that all its requests gather.
 */
export function balanceReader(pool: pg.Pool): BalanceReader {
  return gatheredReads(pool, () => new DomainError('unavailable', 'The service is busy. Retry shortly.'), (ids: number[]) => readBalances(pool, ids));
}

/** What the reads below run on: the pool, and the settings cache and balance reader made for it. */
export interface WorkspaceReads {
  pool: Db;
  settings: WorkspaceSettingsCache;
  balances: BalanceReader;
}

/** The workspace's settings and balances, formatted in its currency: /me and the console's overview. */
export async function workspaceSummary({ settings, balances }: WorkspaceReads, workspaceId: number) {
  const [w, { available, held }] = await Promise.all([settings.get(workspaceId), balances(workspaceId)]);
  return {
    workspace: {
      id: w.id,
      name: w.name,
      currency: w.currency,
      approval_rules: { max_order_cents: w.maxOrderCents, approval_above_cents: w.approvalAboveCents, auto_approve_drafts: w.autoApproveDrafts },
    },
    balance: available,
    balance_formatted: formatCents(available, w.currency, w.perUsd),
    held,
    held_formatted: formatCents(held, w.currency, w.perUsd),
    brand_kits: w.brandKits,
  };
}

/**
 * The calling key's budget (docs/budgets.md): null for a key without limits or expiry, and then
 * no statement; otherwise what its budget spent this UTC day and month, one indexed read.
 */
export async function keyBudget({ pool, settings }: WorkspaceReads, principal: WorkspacePrincipal, now: number) {
  const b = principal.budget;
  if (!b) return null;
  const [w, spent] = await Promise.all([
    settings.get(principal.workspaceId),
    hasSpendLimits(b.limits) ? readSpent(pool, [b.limits.budget_id], now).then((m) => m.get(b.limits.budget_id)) : undefined,
  ]);
  return budgetView(b.limits, b.expiresAt, spent, now, (c) => formatCents(c, w.currency, w.perUsd));
}

export async function getMe(reads: WorkspaceReads, principal: WorkspacePrincipal, now: number = Date.now()) {
  const [summary, budget] = await Promise.all([workspaceSummary(reads, principal.workspaceId), keyBudget(reads, principal, now)]);
  return {
    ...summary,
    key: {
      id: principal.keyId,
      name: principal.name,
      prefix: principal.prefix,
      can_place_orders: principal.canPlaceOrders,
      // A key (or token) that cannot spend has nothing to wait for.
      needs_approval: principal.canPlaceOrders && principal.needsApproval === true,
      abilities: principal.abilities,
      budget,
    },
  };
}
