import type pg from 'pg';
import type { WorkspacePrincipal } from '../keys/principal.js';
import { formatCents } from '../money/format.js';
import type { WorkspaceSettingsCache } from './settings-cache.js';

// /me is the hottest read: the settings come from a 5-second per-process cache, so a request
// costs one prepared statement, the two balances.
const balancesStatement = {
  name: 'workspace_balances',
  text: `SELECT COALESCE(max(balance) FILTER (WHERE kind = 'available'), 0) AS available,
                COALESCE(max(balance) FILTER (WHERE kind = 'held'), 0) AS held
           FROM ledger_accounts WHERE workspace_id = $1`,
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
    pool.query<{ available: number; held: number }>({ ...balancesStatement, values: [principal.workspaceId] }),
  ]);
  const { available, held } = balances.rows[0]!;
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
