import type pg from 'pg';
import type { WorkspacePrincipal } from '../keys/principal.js';
import { formatCents } from '../money/format.js';
import type { WorkspaceSettingsCache } from './settings-cache.js';

// /me is the hottest read: the settings come from a 5-second per-process cache, so a request
// costs one prepared statement, the two balances.
const balancesStatement = {
  name: 'workspace_balances',
  text: `SELECT kind, balance FROM ledger_accounts WHERE workspace_id = $1`,
};

export interface BrandKit {
  id: number;
  name: string;
  website: string | null;
  description: string | null;
  tone: string | null;
  default_anchor_texts: string[];
}

export async function getMe(pool: pg.Pool, settings: WorkspaceSettingsCache, principal: WorkspacePrincipal) {
  const [w, balances] = await Promise.all([
    settings.get(principal.workspaceId),
    pool.query<{ kind: 'available' | 'held'; balance: number }>({ ...balancesStatement, values: [principal.workspaceId] }),
  ]);
  let available = 0;
  let held = 0;
  for (const row of balances.rows) {
    if (row.kind === 'available') available = row.balance;
    else held = row.balance;
  }
  return {
    workspace: {
      id: w.id,
      name: w.name,
      currency: w.currency,
      approval_rules: { max_order_cents: w.maxOrderCents, auto_approve_drafts: w.autoApproveDrafts },
    },
    balance: available,
    balance_formatted: formatCents(available, w.currency, w.perUsd),
    held,
    held_formatted: formatCents(held, w.currency, w.perUsd),
    brand_kits: w.brandKits,
    key: {
      id: principal.keyId,
      name: principal.name,
      prefix: principal.prefix,
      can_place_orders: principal.canPlaceOrders,
      abilities: principal.abilities,
    },
  };
}
