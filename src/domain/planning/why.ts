import type { OfferRow, OutletRow } from '../outlets/outlet-view.js';
import type { MatchWhere, WordMatch } from './score.js';

const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });
const WHERE_LABEL: Record<MatchWhere, string> = { name: 'its name or domain', topics: 'its topics', description: 'its description' };
const FORMAT_LABEL: Record<OfferRow['format'], string> = {
  guest_post: 'Guest post',
  sponsored_article: 'Sponsored article',
  link_insertion: 'Link insertion',
  press_release: 'Press release',
};

function andList(items: string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/**
 * One sentence per pick, naming each part of the score, e.g. "Matches 'travel' in its topics;
 * 1.2M verified monthly visits; 98% on time, 95% accepted, rated 4.6/5, 90% of links alive at 60
 * days; Guest post for $120.00 of your $500.00 budget."
 */
export function whyPicked(p: {
  matches: readonly WordMatch[];
  outlet: Pick<OutletRow, 'monthly_visits' | 'traffic_verified' | 'base_on_time_rate' | 'base_acceptance_rate' | 'base_rating'> &
    Partial<Pick<OutletRow, 'link_survival_30d' | 'link_survival_60d' | 'verification_pass_rate'>>;
  offer: Pick<OfferRow, 'format' | 'price'>;
  budgetCents: number;
  fmt: (cents: number) => string;
}): string {
  const parts: string[] = [];
  if (p.matches.length === 0) {
    parts.push('Matches none of the words of your goal (picked on quality)');
  } else {
    const byWhere = (['name', 'topics', 'description'] as const)
      .map((where) => {
        const words = p.matches.filter((m) => m.where === where).map((m) => `'${m.word}'${m.fromAudience ? ' (audience)' : ''}`);
        return words.length ? `${andList(words)} in ${WHERE_LABEL[where]}` : '';
      })
      .filter(Boolean);
    parts.push(`Matches ${byWhere.join(', ')}`);
  }
  const o = p.outlet;
  parts.push(`${compact.format(o.monthly_visits)} ${o.traffic_verified ? 'verified' : 'unverified'} monthly visits`);
  const record: string[] = [];
  if (o.base_on_time_rate !== null) record.push(`${Math.round(o.base_on_time_rate * 100)}% on time`);
  if (o.base_acceptance_rate !== null) record.push(`${Math.round(o.base_acceptance_rate * 100)}% accepted`);
  if (o.base_rating !== null) record.push(`rated ${o.base_rating}/5`);
  // As the score counts survival: the 60-day figure when known.
  if (o.link_survival_60d != null) record.push(`${Math.round(o.link_survival_60d * 100)}% of links alive at 60 days`);
  else if (o.link_survival_30d != null) record.push(`${Math.round(o.link_survival_30d * 100)}% of links alive at 30 days`);
  if (o.verification_pass_rate != null) record.push(`${Math.round(o.verification_pass_rate * 100)}% passed their first check`);
  parts.push(record.length ? record.join(', ') : 'no track record yet');
  parts.push(`${FORMAT_LABEL[p.offer.format]} for ${p.fmt(p.offer.price)} of your ${p.fmt(p.budgetCents)} budget`);
  return `${parts.join('; ')}.`;
}
