import type pg from 'pg';
import { notFound } from '../errors.js';
import type { WorkspacePrincipal } from '../keys/principal.js';
import { formatCents } from '../money/format.js';

// /me is the hottest read: one named (prepared) statement gathers workspace, FX rate, both
// balances and brand kits in a single round trip.
const meStatement = {
  name: 'workspace_me',
  text: `
    SELECT w.id, w.name, w.currency, w.max_order_cents, w.auto_approve_drafts, fx.per_usd::float8 AS per_usd,
      COALESCE((SELECT balance FROM ledger_accounts WHERE workspace_id = w.id AND kind = 'available'), 0) AS available,
      COALESCE((SELECT balance FROM ledger_accounts WHERE workspace_id = w.id AND kind = 'held'), 0) AS held,
      COALESCE((SELECT json_agg(json_build_object(
          'id', b.id, 'name', b.name, 'website', b.website, 'description', b.description,
          'tone', b.tone, 'default_anchor_texts', b.default_anchor_texts) ORDER BY b.id)
        FROM brand_kits b WHERE b.workspace_id = w.id), '[]'::json) AS brand_kits
    FROM workspaces w JOIN fx_rates fx ON fx.currency = w.currency
    WHERE w.id = $1`,
};

export interface BrandKit {
  id: number;
  name: string;
  website: string | null;
  description: string | null;
  tone: string | null;
  default_anchor_texts: string[];
}

interface MeRow {
  id: number;
  name: string;
  currency: string;
  max_order_cents: number | null;
  auto_approve_drafts: boolean;
  per_usd: number;
  available: number;
  held: number;
  brand_kits: BrandKit[];
}

export async function getMe(pool: pg.Pool, principal: WorkspacePrincipal) {
  const { rows } = await pool.query<MeRow>({ ...meStatement, values: [principal.workspaceId] });
  const w = rows[0];
  if (!w) throw notFound('Workspace');
  return {
    workspace: {
      id: w.id,
      name: w.name,
      currency: w.currency,
      approval_rules: { max_order_cents: w.max_order_cents, auto_approve_drafts: w.auto_approve_drafts },
    },
    balance: w.available,
    balance_formatted: formatCents(w.available, w.currency, w.per_usd),
    held: w.held,
    held_formatted: formatCents(w.held, w.currency, w.per_usd),
    brand_kits: w.brand_kits,
    key: {
      id: principal.keyId,
      name: principal.name,
      prefix: principal.prefix,
      can_place_orders: principal.canPlaceOrders,
      abilities: principal.abilities,
    },
  };
}
