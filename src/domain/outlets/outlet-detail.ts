import type { Db } from '../../db/handle.js';
import { notFound } from '../errors.js';
import { type Money, offerView, outletColumns, type OfferRow, type OutletRow, outletView, trackRecordJoin } from './outlet-view.js';

const detailStatement = `
  SELECT ${outletColumns}, m.currency, m.per_usd,
         COALESCE((SELECT json_agg(f ORDER BY f.price, f.id) FROM (
             SELECT id, outlet_id, format, title, price, turnaround_days, content_by, min_words, max_words,
                    max_links, link_type, sponsored_label, permanent, active
               FROM offers WHERE outlet_id = o.id AND active) f), '[]'::json) AS offers
    FROM outlets o
   CROSS JOIN (SELECT w.currency, fx.per_usd::float8 AS per_usd FROM workspaces w
                 JOIN fx_rates fx ON fx.currency = w.currency WHERE w.id = $2) m
   ${trackRecordJoin}
   WHERE o.id = $1`;

/** One outlet with every active offer, prices fee-inclusive in the workspace currency. */
export async function getOutlet(pool: Db, workspaceId: number, outletId: number) {
  const { rows } = await pool.query({ name: 'outlet_detail', text: detailStatement, values: [outletId, workspaceId] });
  const r = rows[0] as (OutletRow & { currency: string; per_usd: number; offers: OfferRow[] }) | undefined;
  if (!r) throw notFound('Outlet');
  const money: Money = { currency: r.currency, perUsd: r.per_usd };
  return { ...outletView(r), offers: r.offers.map((f) => offerView(f, money)) };
}
