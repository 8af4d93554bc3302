import type { Db } from '../../db/handle.js';
import { invalidInput, notFound } from '../errors.js';
import type { WorkspacePrincipal } from '../keys/principal.js';
import { formatCents } from '../money/format.js';
import type { OfferFormat } from '../outlets/enums.js';
import type { SearchEngine } from '../outlets/search-engine.js';
import { type Money, type OfferRow, offerView, outletView } from '../outlets/outlet-view.js';
import {
  CANDIDATE_LIMIT,
  type Candidate,
  type CandidateQuery,
  type CandidateSet,
  cheapestMatchingOffer,
  fetchCandidates,
  lookUpTerms,
  termsOf,
} from './candidates.js';
import { detectLanguage, languageLabel, tooShortToTell } from './language.js';
import { solveMultipleChoiceKnapsackAtMost } from './knapsack.js';
import { costPart, relevancePart, score, trackRecordPart, trafficPart } from './score.js';
import { whyPicked } from './why.js';
import { notOwnProject } from '../workspaces/projects.js';
import { MAX_OFFERS_PER_REQUEST } from '../orders/placement-rules.js';

export interface PlanInput {
  goal: string;
  budgetCents: number;
  audience?: string | undefined;
  countries?: string[] | undefined;
  formats?: OfferFormat[] | undefined;
  /** ISO 639-1 codes, lower case; omitted or empty: the goal's language when it can be told. */
  languages?: string[] | undefined;
  projectId?: number | undefined;
}

interface Option {
  candidate: Candidate;
  offer: OfferRow;
  cost: number;
  /** Score in hundredths: integers keep the DP's sums exact. */
  value: number;
  score: number;
}

const workspaceStatement = {
  name: 'plan_workspace',
  text: `SELECT w.currency, fx.per_usd::float8 AS per_usd,
                ($2::bigint IS NULL OR EXISTS (SELECT 1 FROM projects p WHERE p.id = $2 AND p.workspace_id = w.id)) AS project_ok
           FROM workspaces w JOIN fx_rates fx ON fx.currency = w.currency
          WHERE w.id = $1`,
};

/**
 * A plan: the offers that maximise the summed score (score.ts) within the budget, at most one per
 * outlet, honouring countries and formats. Reads only: it buys, holds and writes nothing.
 */
export async function planCampaign(pool: Db, search: SearchEngine, principal: WorkspacePrincipal, input: PlanInput) {
  const countries = input.countries?.length ? [...new Set(input.countries)] : undefined;
  const formats = input.formats?.length ? [...new Set(input.formats)] : undefined;
  const query = { goal: input.goal, audience: input.audience, budgetCents: input.budgetCents, countries, formats };
  const [ws, { set, languages }] = await Promise.all([
    pool.query<{ currency: string; per_usd: number; project_ok: boolean }>({
      ...workspaceStatement,
      values: [principal.workspaceId, input.projectId ?? null],
    }),
    candidatesIn(pool, search, query, input.languages),
  ]);
  const w = ws.rows[0];
  if (!w) throw notFound('Workspace');
  if (!w.project_ok) throw notOwnProject();
  const money: Money = { currency: w.currency, perUsd: w.per_usd };
  const fmt = (cents: number) => formatCents(cents, money.currency, money.perUsd);
  const budget = input.budgetCents;

  const groups = scoreOptions(set.candidates, budget);
  const result = solveMultipleChoiceKnapsackAtMost(groups, budget, MAX_OFFERS_PER_REQUEST);
  const picks = [...result.picks].sort(
    (a, b) => b.score - a.score || a.cost - b.cost || a.candidate.outlet.id - b.candidate.outlet.id,
  );
  const total = result.totalCost;

  const items = picks.map((p) => ({
    outlet: outletView(p.candidate.outlet),
    offer: offerView(p.offer, money),
    score: p.score,
    why: whyPicked({ matches: p.candidate.matches, outlet: p.candidate.outlet, offer: p.offer, budgetCents: budget, fmt }),
  }));

  const used = languages.kind === 'given' || languages.kind === 'detected' ? languages.codes : undefined;
  const filters = describeFilters(countries, used, formats);
  const candidateCount = set.candidates.length;
  const outcome =
    picks.length > 0
      ? planMessage({ picks, groups, total, budget, capped: result.capped, textMatched: set.textMatched, candidateCount, filters, fmt })
      : await emptyPlanMessage(pool, { countries, languages: used, formats, budget, fmt, hadCandidates: candidateCount > 0 });
  const message = `${outcome} ${languageNote(languages)}`;

  return {
    goal: input.goal,
    budget_cents: budget,
    budget_cents_formatted: fmt(budget),
    total_cents: total,
    total_cents_formatted: fmt(total),
    remaining_cents: budget - total,
    remaining_cents_formatted: fmt(budget - total),
    items,
    offer_ids: items.map((i) => i.offer.id),
    message,
  };
}

/** Which languages a plan kept to, and why. */
type Languages =
  | { kind: 'given'; codes: string[] }
  | { kind: 'detected'; codes: string[] }
  /** The goal's language was told, but no outlet in it had a fitting offer: any language. */
  | { kind: 'widened'; detected: string }
  | { kind: 'unknown'; tooShort: boolean };

/**
 * The candidates, in the languages asked for, else in the goal's language when it can be told.
 * A detected language is a default, not a filter the caller chose: when no outlet in it has a
 * fitting offer, any language is taken rather than an empty plan.
 */
async function candidatesIn(
  pool: Db,
  search: SearchEngine,
  query: Omit<CandidateQuery, 'languages'>,
  asked: string[] | undefined,
): Promise<{ set: CandidateSet; languages: Languages }> {
  const given = asked?.length ? [...new Set(asked)] : undefined;
  const [terms, detected] = await Promise.all([
    lookUpTerms(search.terms, termsOf(query.goal, query.audience), search.current()),
    given ? Promise.resolve(undefined) : detectLanguage(query.goal),
  ]);
  const codes = given ?? (detected ? [detected] : undefined);
  const set = await fetchCandidates(pool, search, { ...query, languages: codes }, terms);
  if (given) return { set, languages: { kind: 'given', codes: given } };
  if (!detected) return { set, languages: { kind: 'unknown', tooShort: tooShortToTell(query.goal) } };
  if (set.candidates.length > 0) return { set, languages: { kind: 'detected', codes: [detected] } };
  return { set: await fetchCandidates(pool, search, query, terms), languages: { kind: 'widened', detected } };
}

/** The sentence of `message` that says which languages the plan kept to, and why. */
function languageNote(l: Languages): string {
  switch (l.kind) {
    case 'given':
      return `Outlets in ${orList(l.codes.map(languageLabel))}, as asked.`;
    case 'detected':
      return `Outlets in ${languageLabel(l.codes[0]!)} only, the language of your goal; send languages to choose others.`;
    case 'widened':
      return (
        `Your goal reads as ${languageLabel(l.detected)}, but no outlet in that language has a fitting offer, ` +
        'so outlets in any language were considered.'
      );
    case 'unknown':
      return l.tooShort
        ? 'Outlets in any language: your goal is too short to tell its language (send languages to choose).'
        : 'Outlets in any language: the language of your goal could not be told with confidence (send languages to choose).';
  }
}

/** Every candidate offer with its score (score.ts), grouped by outlet for the knapsack. */
function scoreOptions(candidates: Candidate[], budget: number): Option[][] {
  return candidates.map((candidate) => {
    const relevance = relevancePart(candidate.matches);
    const traffic = trafficPart(candidate.outlet.monthly_visits, candidate.outlet.traffic_verified);
    const trackRecord = trackRecordPart({
      onTimeRate: candidate.outlet.base_on_time_rate,
      acceptanceRate: candidate.outlet.base_acceptance_rate,
      rating: candidate.outlet.base_rating,
      linkSurvival30d: candidate.outlet.link_survival_30d,
      linkSurvival60d: candidate.outlet.link_survival_60d,
      verificationPassRate: candidate.outlet.verification_pass_rate,
    });
    return candidate.offers.map((offer) => {
      const s = score({ relevance, traffic, trackRecord, cost: costPart(offer.price, budget) });
      return { candidate, offer, cost: offer.price, score: s, value: Math.round(s * 100) };
    });
  });
}

/** What a non-empty plan bought, and why it stops where it does. */
function planMessage(p: {
  picks: Option[];
  groups: Option[][];
  total: number;
  budget: number;
  /** Whether the best plan would have picked more than one order request takes. */
  capped: boolean;
  textMatched: boolean;
  candidateCount: number;
  filters: string;
  fmt: (c: number) => string;
}): string {
  const { picks, total, budget, fmt } = p;
  let message = `Picked ${picks.length} outlet${picks.length === 1 ? '' : 's'} for ${fmt(total)} of your ${fmt(budget)} budget (${fmt(budget - total)} left).`;
  if (!p.textMatched) {
    message += ` No outlet${p.filters} with an offer within your budget matches the words of your goal in its name, topics or description, so these are ranked by traffic, track record and cost only.`;
  }
  if (p.capped) {
    return `${message} A plan picks at most ${MAX_OFFERS_PER_REQUEST} outlets, as many as one POST /api/v1/orders takes, so its offer_ids can be sent as they are.`;
  }
  if (budget - total === 0) return message;
  const pickedOutlets = new Set(picks.map((o) => o.candidate.outlet.id));
  const unpicked = p.groups.flat().filter((o) => !pickedOutlets.has(o.candidate.outlet.id)).map((o) => o.cost);
  if (unpicked.length === 0 && p.candidateCount >= CANDIDATE_LIMIT) {
    message += ` A plan chooses among the ${CANDIDATE_LIMIT} best-ranked outlets, and it took every one.`;
  } else if (unpicked.length === 0) {
    message += ` That is every ${p.textMatched ? 'matching ' : ''}outlet${p.filters} with an offer within your budget.`;
  } else if (budget - total < Math.min(...unpicked)) {
    message += ` What is left is less than the cheapest other matching offer (${fmt(Math.min(...unpicked))}).`;
  }
  return message;
}

async function emptyPlanMessage(
  pool: Db,
  o: {
    countries: string[] | undefined;
    languages: string[] | undefined;
    formats: OfferFormat[] | undefined;
    budget: number;
    fmt: (c: number) => string;
    hadCandidates: boolean;
  },
): Promise<string> {
  if (o.hadCandidates) return `Empty plan: no matching offer adds anything to a plan within your ${o.fmt(o.budget)} budget.`;
  const cheapest = await cheapestMatchingOffer(pool, { countries: o.countries, languages: o.languages, formats: o.formats });
  const where =
    (o.countries ? ` in ${orList(o.countries)}` : '') + (o.languages ? ` writing in ${orList(o.languages.map(languageLabel))}` : '');
  const what = o.formats ? `${orList(o.formats.map((f) => f.replace(/_/g, ' ')))} ` : '';
  const filtered = Boolean(o.countries || o.languages || o.formats);
  const widen = o.languages ? 'countries, languages or formats' : 'countries or formats';
  if (cheapest === null) {
    return filtered ? `Empty plan: no outlet${where} has an active ${what}offer. Widen the ${widen}.` : 'Empty plan: no outlet has an active offer yet.';
  }
  if (cheapest > o.budget) {
    return `Empty plan: your budget of ${o.fmt(o.budget)} is below the cheapest matching offer, ${o.fmt(cheapest)} (the cheapest active ${what}offer${where}). Raise the budget${filtered ? ` or widen the ${widen}` : ''}.`;
  }
  // Only when the catalog changed between the two reads.
  return `Empty plan: no offer fits your budget of ${o.fmt(o.budget)} right now. Try again.`;
}

/** " (in DE or FR; in German (de); guest post or press release)", or "" without filters. */
function describeFilters(countries: string[] | undefined, languages: string[] | undefined, formats: OfferFormat[] | undefined): string {
  const parts: string[] = [];
  if (countries) parts.push(`in ${orList(countries)}`);
  if (languages) parts.push(`in ${orList(languages.map(languageLabel))}`);
  if (formats) parts.push(orList(formats.map((f) => f.replace(/_/g, ' '))));
  return parts.length ? ` (${parts.join('; ')})` : '';
}

function orList(items: string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}
