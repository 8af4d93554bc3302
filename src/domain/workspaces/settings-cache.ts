import type { LRUCache } from 'lru-cache';
import type { Db } from '../../db/handle.js';
import { expiringCache, type Clock } from '../clock.js';
import { notFound } from '../errors.js';

/** A brand kit as the workspace's settings (and `/me`) show it. */
export interface BrandKit {
  id: number;
  name: string;
  website: string | null;
  description: string | null;
  tone: string | null;
  default_anchor_texts: string[];
}

export interface WorkspaceSettings {
  id: number;
  name: string;
  currency: string;
  perUsd: number;
  maxOrderCents: number | null;
  approvalAboveCents: number | null;
  autoApproveDrafts: boolean;
  brandKits: BrandKit[];
}

const TTL_MS = 5_000; // the same bound as the key cache: settings changes show within 5 s

const settingsStatement = {
  name: 'workspace_settings',
  text: `SELECT w.id, w.name, w.currency, w.max_order_cents, w.approval_above_cents, w.auto_approve_drafts, fx.per_usd::float8 AS per_usd,
           COALESCE((SELECT json_agg(json_build_object(
               'id', b.id, 'name', b.name, 'website', b.website, 'description', b.description,
               'tone', b.tone, 'default_anchor_texts', b.default_anchor_texts) ORDER BY b.id)
             FROM brand_kits b WHERE b.workspace_id = w.id), '[]'::json) AS brand_kits
           FROM workspaces w JOIN fx_rates fx ON fx.currency = w.currency WHERE w.id = $1`,
};

/**
 * A workspace's slowly changing settings (name, currency and FX rate, approval rules, brand
 * kits), cached per process for at most 5 seconds so hot reads need only their live figures.
 * Money decisions never use it: spending reads the rules inside its own transaction.
 */
export class WorkspaceSettingsCache {
  // At most 10,000 workspaces, least recently read out first; the 5 s runs on the injected
  // clock, so tests move time without sleeping.
  private readonly entries: LRUCache<number, WorkspaceSettings>;

  constructor(
    private readonly pool: Db,
    clock: Clock,
  ) {
    this.entries = expiringCache(clock, { max: 10_000, ttl: TTL_MS });
  }

  async get(workspaceId: number): Promise<WorkspaceSettings> {
    const hit = this.entries.get(workspaceId);
    if (hit) return hit;
    const { rows } = await this.pool.query({ ...settingsStatement, values: [workspaceId] });
    const r = rows[0];
    if (!r) throw notFound('Workspace');
    const value: WorkspaceSettings = {
      id: r.id,
      name: r.name,
      currency: r.currency,
      perUsd: r.per_usd,
      maxOrderCents: r.max_order_cents,
      approvalAboveCents: r.approval_above_cents,
      autoApproveDrafts: r.auto_approve_drafts,
      brandKits: r.brand_kits,
    };
    this.entries.set(workspaceId, value);
    return value;
  }
}
