import { isoSeconds } from '../../common/iso-seconds.js';
import { formatCents } from '../money/format.js';
import type { OfferFormat, OutletType } from './enums.js';

/**
 * Columns every outlet query selects, in the shape `outletView` reads. The track record is the
 * stored baseline until the outlet has orders here; then it is computed from them:
 * - orders_completed: completed orders;
 * - acceptance_rate: accepted ÷ (accepted + declined + expired while awaiting acceptance);
 * - on_time_rate: published ÷ (published + expired while writing or publishing);
 * - avg_turnaround_days: mean time from acceptance to publication;
 * - rating: the stored baseline (the marketplace collects no ratings of its own).
 * The link figures have no baseline: they are the marketplace's own checks of placements, null
 * until one was made (docs/orders.md):
 * - link_survival_30d, link_survival_60d: alive ÷ checked of the links checked at or after 30 /
 *   60 days from completion (a refunded lost link counts as not alive), with the counts checked;
 * - verification_pass_rate: passed ÷ made of the first automatic checks of a placement.
 */
export const outletColumns = `o.id, o.name, o.domain, o.url, o.description, o.type, o.country, o.language, o.topics,
  o.monthly_visits, o.traffic_verified, o.traffic_verified_at,
  CASE WHEN tr.n > 0 THEN tr.completed ELSE o.base_orders_completed END AS base_orders_completed,
  CASE WHEN tr.n > 0 THEN round(tr.published::numeric / NULLIF(tr.published + tr.missed, 0), 3)::float8
       ELSE o.base_on_time_rate::float8 END AS base_on_time_rate,
  CASE WHEN tr.n > 0 THEN round(tr.accepted::numeric / NULLIF(tr.accepted + tr.refused, 0), 3)::float8
       ELSE o.base_acceptance_rate::float8 END AS base_acceptance_rate,
  CASE WHEN tr.n > 0 THEN round(tr.turnaround_days, 1)::float8
       ELSE o.base_avg_turnaround_days::float8 END AS base_avg_turnaround_days,
  o.base_rating::float8 AS base_rating,
  tr.checked_30d AS links_checked_30d, round(tr.alive_30d::numeric / NULLIF(tr.checked_30d, 0), 3)::float8 AS link_survival_30d,
  tr.checked_60d AS links_checked_60d, round(tr.alive_60d::numeric / NULLIF(tr.checked_60d, 0), 3)::float8 AS link_survival_60d,
  tr.first_checks AS placements_checked, round(tr.first_passed::numeric / NULLIF(tr.first_checks, 0), 3)::float8 AS verification_pass_rate`;

/** Joined as `tr` by every query that selects `outletColumns`; reads the outlet's orders by index. */
export const trackRecordJoin = `LEFT JOIN LATERAL (
    SELECT count(*)::int AS n,
           count(*) FILTER (WHERE status = 'completed')::int AS completed,
           count(*) FILTER (WHERE accepted_at IS NOT NULL)::int AS accepted,
           count(*) FILTER (WHERE status = 'declined' OR expired_in = 'awaiting_acceptance')::int AS refused,
           count(*) FILTER (WHERE published_at IS NOT NULL)::int AS published,
           count(*) FILTER (WHERE expired_in IN ('writing', 'publishing'))::int AS missed,
           avg(extract(epoch FROM published_at - accepted_at) / 86400)
             FILTER (WHERE published_at IS NOT NULL AND accepted_at IS NOT NULL) AS turnaround_days,
           count(alive_30d)::int AS checked_30d,
           count(*) FILTER (WHERE alive_30d)::int AS alive_30d,
           count(alive_60d)::int AS checked_60d,
           count(*) FILTER (WHERE alive_60d)::int AS alive_60d,
           count(first_check_passed)::int AS first_checks,
           count(*) FILTER (WHERE first_check_passed)::int AS first_passed
      FROM orders WHERE outlet_id = o.id) tr ON true`;

export interface OutletRow {
  id: number;
  name: string;
  domain: string;
  url: string;
  description: string;
  type: OutletType;
  country: string;
  language: string;
  topics: string[];
  monthly_visits: number;
  traffic_verified: boolean;
  traffic_verified_at: Date | null;
  base_orders_completed: number;
  base_on_time_rate: number | null;
  base_acceptance_rate: number | null;
  base_avg_turnaround_days: number | null;
  base_rating: number | null;
  links_checked_30d: number;
  link_survival_30d: number | null;
  links_checked_60d: number;
  link_survival_60d: number | null;
  placements_checked: number;
  verification_pass_rate: number | null;
}

export interface OfferRow {
  id: number;
  outlet_id: number;
  format: OfferFormat;
  title: string;
  price: number;
  turnaround_days: number;
  content_by: 'buyer' | 'publisher';
  min_words: number;
  max_words: number;
  max_links: number;
  link_type: 'dofollow' | 'nofollow';
  sponsored_label: boolean;
  permanent: boolean;
  active: boolean;
}

export interface Money {
  currency: string;
  perUsd: number;
}


export function outletView(r: OutletRow) {
  return {
    id: r.id,
    name: r.name,
    domain: r.domain,
    url: r.url,
    description: r.description,
    type: r.type,
    country: r.country,
    language: r.language,
    topics: r.topics,
    traffic: { monthly_visits: r.monthly_visits, verified: r.traffic_verified, verified_at: isoSeconds(r.traffic_verified_at) },
    track_record: {
      orders_completed: r.base_orders_completed,
      on_time_rate: r.base_on_time_rate,
      acceptance_rate: r.base_acceptance_rate,
      avg_turnaround_days: r.base_avg_turnaround_days,
      rating: r.base_rating,
      link_survival_30d: r.link_survival_30d,
      links_checked_30d: r.links_checked_30d,
      link_survival_60d: r.link_survival_60d,
      links_checked_60d: r.links_checked_60d,
      verification_pass_rate: r.verification_pass_rate,
      placements_checked: r.placements_checked,
    },
  };
}

export function offerView(f: OfferRow, money: Money) {
  return {
    id: f.id,
    outlet_id: f.outlet_id,
    format: f.format,
    title: f.title,
    price: f.price,
    price_formatted: formatCents(f.price, money.currency, money.perUsd),
    turnaround_days: f.turnaround_days,
    content_by: f.content_by,
    min_words: f.min_words,
    max_words: f.max_words,
    max_links: f.max_links,
    link_type: f.link_type,
    sponsored_label: f.sponsored_label,
    permanent: f.permanent,
    active: f.active,
  };
}
