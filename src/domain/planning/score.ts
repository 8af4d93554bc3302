/**
 * The planner's score: what a plan maximises (summed over its picks). Each part is in [0, 1];
 * the score is 100 × the weighted sum, rounded to 2 decimals. The SQL in candidates.ts computes
 * relevance, traffic and track record with these same constants, to pre-rank outlets.
 */
export const WEIGHTS = { relevance: 0.45, traffic: 0.25, trackRecord: 0.2, cost: 0.1 } as const;

/** How much one matched word of the goal adds, by where it matched (search_vector weights). */
export const MATCH_STRENGTH = { A: 0.6, B: 0.5, C: 0.3 } as const;
/** Words of `audience` count at this fraction of a goal word. */
export const AUDIENCE_FACTOR = 0.5;
/** log10(monthly visits + 1) / TRAFFIC_LOG_CAP, capped at 1: 10M visits a month is full marks. */
export const TRAFFIC_LOG_CAP = 7;
export const TRAFFIC_VERIFIED_BONUS = 0.2;
/** Track record when an outlet has no figures at all: neutral. */
export const UNKNOWN_TRACK_RECORD = 0.5;

export const SCORE_FORMULA = [
  `score = 100 × (${WEIGHTS.relevance} × relevance + ${WEIGHTS.traffic} × traffic + ${WEIGHTS.trackRecord} × track_record + ${WEIGHTS.cost} × cost), 0..100, 2 decimals. Each part is 0..1:`,
  `relevance = 1 − Π(1 − s) over the distinct words of goal and audience (English stop words dropped) found in the outlet's full-text index, ` +
    `s = where the word matches best: ${MATCH_STRENGTH.A} its name or domain, ${MATCH_STRENGTH.B} its topics, ${MATCH_STRENGTH.C} its description ` +
    `(words are read as outlet search reads them: a word's English stem, singular and plural count as the word, and a word the catalog ` +
    `does not use counts through its nearest catalog words, so a typo still matches), ` +
    `halved for words of audience;`,
  `traffic = ${1 - TRAFFIC_VERIFIED_BONUS} × min(1, log10(monthly_visits + 1) / ${TRAFFIC_LOG_CAP}) + ${TRAFFIC_VERIFIED_BONUS} if the traffic is Google-verified;`,
  `track_record = mean of on_time_rate, acceptance_rate, rating / 5, link survival (link_survival_60d, or link_survival_30d while no link ` +
    `was checked that late) and verification_pass_rate of the outlet's track record (those known; ${UNKNOWN_TRACK_RECORD} when none is);`,
  `cost = 1 − price / budget (value per dollar: an offer that takes the whole budget scores 0 here).`,
].join(' ');

export interface OutletFigures {
  monthlyVisits: number;
  trafficVerified: boolean;
  onTimeRate: number | null;
  acceptanceRate: number | null;
  rating: number | null;
  linkSurvival30d: number | null;
  linkSurvival60d: number | null;
  verificationPassRate: number | null;
}

export function trafficPart(visits: number, verified: boolean): number {
  const reach = Math.min(1, Math.log10(Math.max(0, visits) + 1) / TRAFFIC_LOG_CAP);
  return (1 - TRAFFIC_VERIFIED_BONUS) * reach + (verified ? TRAFFIC_VERIFIED_BONUS : 0);
}

export type TrackRecordFigures = Pick<
  OutletFigures,
  'onTimeRate' | 'acceptanceRate' | 'rating' | 'linkSurvival30d' | 'linkSurvival60d' | 'verificationPassRate'
>;

export function trackRecordPart(f: TrackRecordFigures): number {
  // Survival counts once: the longest horizon checked says most about a link lasting.
  const survival = f.linkSurvival60d ?? f.linkSurvival30d;
  const known = [f.onTimeRate, f.acceptanceRate, f.rating === null ? null : f.rating / 5, survival, f.verificationPassRate].filter(
    (v): v is number => v !== null,
  );
  if (known.length === 0) return UNKNOWN_TRACK_RECORD;
  return Math.min(1, Math.max(0, known.reduce((s, v) => s + v, 0) / known.length));
}

export function costPart(priceCents: number, budgetCents: number): number {
  return Math.max(0, 1 - priceCents / budgetCents);
}

export interface ScoreParts {
  relevance: number;
  traffic: number;
  trackRecord: number;
  cost: number;
}

export function score(p: ScoreParts): number {
  const raw = WEIGHTS.relevance * p.relevance + WEIGHTS.traffic * p.traffic + WEIGHTS.trackRecord * p.trackRecord + WEIGHTS.cost * p.cost;
  return Math.round(raw * 10_000) / 100;
}

export type MatchWhere = 'name' | 'topics' | 'description';
export interface WordMatch {
  /** The word as the caller wrote it (lower-cased). */
  word: string;
  /** Where it matched best: name or domain (A), topics (B), description (C). */
  where: MatchWhere;
  fromAudience: boolean;
}

const STRENGTH_OF: Record<MatchWhere, number> = { name: MATCH_STRENGTH.A, topics: MATCH_STRENGTH.B, description: MATCH_STRENGTH.C };

export function relevancePart(matches: readonly WordMatch[]): number {
  const miss = matches.reduce((p, m) => p * (1 - STRENGTH_OF[m.where] * (m.fromAudience ? AUDIENCE_FACTOR : 1)), 1);
  return 1 - miss;
}
