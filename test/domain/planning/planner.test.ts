import { describe, expect, it } from 'vitest';
import { formsOf, termsOf } from '../../../src/domain/planning/candidates.js';
import { type KnapsackOption, solveMultipleChoiceKnapsack, solveMultipleChoiceKnapsackAtMost } from '../../../src/domain/planning/knapsack.js';
import { costPart, relevancePart, score, trackRecordPart, trafficPart } from '../../../src/domain/planning/score.js';
import { whyPicked } from '../../../src/domain/planning/why.js';

interface Item extends KnapsackOption {
  name: string;
}
const item = (name: string, value: number, cost: number): Item => ({ name, value, cost });
const names = (picks: Item[]) => picks.map((p) => p.name).sort();
const sum = (picks: Item[], k: 'value' | 'cost') => picks.reduce((s, p) => s + p[k], 0);

/** The naive planners the knapsack must beat: take options in a fixed order while they fit. */
function greedy(groups: Item[][], budget: number, key: (i: Item) => number): Item[] {
  const picks: Item[] = [];
  let spent = 0;
  const used = new Set<number>();
  const all = groups.flatMap((g, gi) => g.map((i) => ({ i, gi }))).sort((a, b) => key(b.i) - key(a.i));
  for (const { i, gi } of all) {
    if (used.has(gi) || spent + i.cost > budget) continue;
    picks.push(i);
    spent += i.cost;
    used.add(gi);
  }
  return picks;
}

/** Exhaustive search over every choice (none or one option) per group. */
function bruteForce(groups: Item[][], budget: number, maxPicks = Infinity): number {
  let best = 0;
  const walk = (g: number, cost: number, value: number, picks = 0) => {
    if (cost > budget || picks > maxPicks) return;
    if (g === groups.length) {
      best = Math.max(best, value);
      return;
    }
    walk(g + 1, cost, value, picks);
    for (const o of groups[g]!) walk(g + 1, cost + o.cost, value + o.value, picks + 1);
  };
  walk(0, 0, 0);
  return best;
}

/** Deterministic PRNG so a failing case can be replayed. */
function rng(seed: number) {
  let a = seed >>> 0;
  return (max: number) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * max);
  };
}

describe('multiple-choice knapsack', () => {
  it('beats greedy-by-score: budget 100, A(10, $60), B(7, $50), C(7, $50) → B + C (14), not A (10)', () => {
    const groups = [[item('A', 10, 60)], [item('B', 7, 50)], [item('C', 7, 50)]];
    const naive = greedy(groups, 100, (i) => i.value);
    expect(names(naive)).toEqual(['A']);
    expect(sum(naive, 'value')).toBe(10);
    const r = solveMultipleChoiceKnapsack(groups, 100);
    expect(names(r.picks)).toEqual(['B', 'C']);
    expect(r.totalValue).toBe(14);
    expect(r.totalCost).toBe(100);
  });

  it('beats greedy-by-value-per-dollar: budget 100, A(12, $10), B(90, $100) → B (90), not A (12)', () => {
    const groups = [[item('A', 12, 10)], [item('B', 90, 100)]];
    const naive = greedy(groups, 100, (i) => i.value / i.cost);
    expect(names(naive)).toEqual(['A']);
    const r = solveMultipleChoiceKnapsack(groups, 100);
    expect(names(r.picks)).toEqual(['B']);
    expect(r.totalValue).toBe(90);
  });

  it('takes at most one option per group, even when two from one group would score more', () => {
    // Without the group rule X1 + X2 (19) would win; with it the best is X1 + Y (15).
    const groups = [[item('X1', 10, 50), item('X2', 9, 50)], [item('Y', 5, 50)]];
    const r = solveMultipleChoiceKnapsack(groups, 100);
    expect(names(r.picks)).toEqual(['X1', 'Y']);
    expect(r.totalValue).toBe(15);
  });

  it('chooses the cheaper option of a group when that frees budget for another group', () => {
    const groups = [[item('X-big', 10, 80), item('X-small', 6, 30)], [item('Y', 8, 60)]];
    const r = solveMultipleChoiceKnapsack(groups, 100);
    expect(names(r.picks)).toEqual(['X-small', 'Y']);
  });

  it('returns nothing when every option costs more than the budget, and ignores worthless options', () => {
    expect(solveMultipleChoiceKnapsack([[item('A', 5, 101)], [item('B', 0, 10)]], 100)).toMatchObject({ picks: [], totalCost: 0, totalValue: 0 });
    expect(solveMultipleChoiceKnapsack([], 100).picks).toEqual([]);
  });

  it('is optimal: matches an exhaustive search on 300 random instances (exact cents)', () => {
    const rand = rng(42);
    for (let n = 0; n < 300; n++) {
      const groups = Array.from({ length: 1 + rand(7) }, (_, g) =>
        Array.from({ length: 1 + rand(3) }, (_, i) => item(`${g}.${i}`, 1 + rand(100), 1 + rand(60))),
      );
      const budget = 1 + rand(200);
      const r = solveMultipleChoiceKnapsack(groups, budget);
      expect(r.exact).toBe(true);
      expect(r.totalValue, `instance ${n}`).toBe(bruteForce(groups, budget));
      expect(r.totalCost).toBeLessThanOrEqual(budget);
      expect(new Set(r.picks.map((p) => p.name.split('.')[0])).size).toBe(r.picks.length);
    }
  });

  it('is exact far beyond the step limit when prices sit on a grid (here $6): counted in its units', () => {
    const rand = rng(11);
    let tabled = 0;
    for (let n = 0; n < 200; n++) {
      const groups = Array.from({ length: 4 + rand(5) }, (_, g) =>
        Array.from({ length: 1 + rand(3) }, (_, i) => item(`${g}.${i}`, rand(1_000) / 7, 600 * (1 + rand(400)))),
      );
      const most = groups.reduce((s, g) => s + Math.max(...g.map((o) => o.cost)), 0);
      const budget = 1 + rand(Math.floor(most * 0.7)); // odd cents included: units must never round the budget up
      const r = solveMultipleChoiceKnapsack(groups, budget, { maxSteps: 2_000 });
      if (r.unit > 1) tabled++;
      expect(r.exact).toBe(true);
      expect(r.totalValue, `instance ${n}`).toBeCloseTo(bruteForce(groups, budget), 9);
      expect(r.totalCost).toBeLessThanOrEqual(budget);
    }
    expect(tabled).toBeGreaterThan(150);
  });

  it('never exceeds the budget when it counts in coarse units, and stays close to optimal', () => {
    const rand = rng(7);
    let coarse = 0;
    for (let n = 0; n < 200; n++) {
      const groups = Array.from({ length: 1 + rand(8) }, (_, g) =>
        Array.from({ length: 1 + rand(3) }, (_, i) => item(`${g}.${i}`, 1 + rand(100), 1 + rand(5_000_000))),
      );
      const budget = 1 + rand(12_000_000);
      const r = solveMultipleChoiceKnapsack(groups, budget, { maxSteps: 50 });
      if (!r.exact) coarse++;
      expect(r.totalCost, `instance ${n}`).toBeLessThanOrEqual(budget);
      expect(r.totalCost).toBe(sum(r.picks, 'cost'));
      expect(new Set(r.picks.map((p) => p.name.split('.')[0])).size).toBe(r.picks.length);
      // With 2,000+ steps (the default) the rounding loses little; with 50 it may lose some.
      const fine = solveMultipleChoiceKnapsack(groups, budget);
      expect(fine.totalCost).toBeLessThanOrEqual(budget);
      expect(fine.totalValue).toBeGreaterThanOrEqual(Math.floor(0.9 * bruteForce(groups, budget)));
    }
    expect(coarse).toBeGreaterThan(100); // most instances needed the table, not the everything-fits shortcut
  });

  it('takes every group\'s best option without a table when the budget covers them all', () => {
    const groups = [[item('X1', 10, 50), item('X2', 9, 5)], [item('Y', 5, 50)]];
    const r = solveMultipleChoiceKnapsack(groups, 1_000);
    expect(names(r.picks)).toEqual(['X1', 'Y']);
    expect(r.totalCost).toBe(100);
  });

  it('spends to the exact cent when a price equals the whole budget', () => {
    const r = solveMultipleChoiceKnapsack([[item('A', 1, 999_999_999)], [item('B', 2, 1_000_000_000)]], 1_000_000_000);
    expect(names(r.picks)).toEqual(['B']);
    expect(r.totalCost).toBe(1_000_000_000);
  });
});

describe('multiple-choice knapsack with at most k picks', () => {
  it('keeps the k best when the budget covers more groups than k', () => {
    const groups = Array.from({ length: 80 }, (_, g) => [item(`g${g}`, 100 + g, 10)]);
    const r = solveMultipleChoiceKnapsackAtMost(groups, 1_000_000, 50);
    expect(r.picks).toHaveLength(50);
    expect(names(r.picks)).toEqual(Array.from({ length: 50 }, (_, i) => `g${i + 30}`).sort());
    expect(r.totalCost).toBe(500);
  });

  it('says whether the limit changed the answer', () => {
    const fifty = Array.from({ length: 50 }, (_, g) => [item(`g${g}`, 10, 10)]);
    expect(solveMultipleChoiceKnapsackAtMost(fifty, 1_000, 50).capped).toBe(false);
    const more = [...fifty, [item('extra', 10, 10)]];
    const r = solveMultipleChoiceKnapsackAtMost(more, 1_000, 50);
    expect(r.capped).toBe(true);
    expect(r.picks).toHaveLength(50);
  });

  it('keeps the plain optimum\'s best k picks when the priced search lands below them', () => {
    // A reviewer's instance: the priced search picked A alone (7,194) where B + C (13,515) fit.
    const groups = [[item('A', 7_194, 1_365), item('B', 6_593, 37)], [item('C', 6_922, 226)], [item('D', 6_477, 927)]];
    const r = solveMultipleChoiceKnapsackAtMost(groups, 1_414, 2);
    expect(r.totalValue).toBe(bruteForce(groups, 1_414, 2));
    expect(names(r.picks)).toEqual(['B', 'C']);
  });

  it('is the plain optimum when that picks few enough', () => {
    const groups = [[item('A', 10, 60)], [item('B', 7, 50)], [item('C', 7, 50)]];
    expect(names(solveMultipleChoiceKnapsackAtMost(groups, 100, 2).picks)).toEqual(['B', 'C']);
  });

  it('never picks more than k or spends more than the budget, and stays close to the capped optimum', () => {
    const rand = rng(5);
    let capped = 0;
    for (let n = 0; n < 300; n++) {
      const groups = Array.from({ length: 2 + rand(7) }, (_, g) =>
        Array.from({ length: 1 + rand(3) }, (_, i) => item(`${g}.${i}`, 1 + rand(100), 1 + rand(60))),
      );
      const budget = 1 + rand(300);
      const k = 1 + rand(3);
      const r = solveMultipleChoiceKnapsackAtMost(groups, budget, k);
      if (solveMultipleChoiceKnapsack(groups, budget).picks.length > k) capped++;
      expect(r.picks.length, `instance ${n}`).toBeLessThanOrEqual(k);
      expect(r.totalCost).toBeLessThanOrEqual(budget);
      expect(r.totalCost).toBe(sum(r.picks, 'cost'));
      expect(new Set(r.picks.map((p) => p.name.split('.')[0])).size).toBe(r.picks.length);
      expect(r.totalValue, `instance ${n}`).toBeGreaterThanOrEqual(Math.floor(0.85 * bruteForce(groups, budget, k)));
    }
    expect(capped).toBeGreaterThan(100);
  });
});

describe('score', () => {
  it('weights relevance 45, traffic 25, track record 20, cost 10 on a 0..100 scale', () => {
    expect(score({ relevance: 1, traffic: 1, trackRecord: 1, cost: 1 })).toBe(100);
    expect(score({ relevance: 1, traffic: 0, trackRecord: 0, cost: 0 })).toBe(45);
    expect(score({ relevance: 0, traffic: 1, trackRecord: 0, cost: 0 })).toBe(25);
    expect(score({ relevance: 0, traffic: 0, trackRecord: 1, cost: 0 })).toBe(20);
    expect(score({ relevance: 0, traffic: 0, trackRecord: 0, cost: 1 })).toBe(10);
  });

  it('relevance: a word in the name counts more than in topics, more than in the description; audience words half', () => {
    const m = (where: 'name' | 'topics' | 'description', fromAudience = false) => ({ word: 'w', where, fromAudience });
    expect(relevancePart([])).toBe(0);
    expect(relevancePart([m('name')])).toBeCloseTo(0.6);
    expect(relevancePart([m('topics')])).toBeCloseTo(0.5);
    expect(relevancePart([m('description')])).toBeCloseTo(0.3);
    expect(relevancePart([m('topics', true)])).toBeCloseTo(0.25);
    expect(relevancePart([m('topics'), m('description')])).toBeCloseTo(1 - 0.5 * 0.7);
  });

  it('traffic: log-scaled visits, a bonus when verified', () => {
    expect(trafficPart(0, false)).toBe(0);
    expect(trafficPart(9_999_999, true)).toBeCloseTo(1);
    expect(trafficPart(99_999, false)).toBeCloseTo(0.8 * (5 / 7));
    expect(trafficPart(99_999, true) - trafficPart(99_999, false)).toBeCloseTo(0.2);
  });

  it('track record: mean of what is known, neutral when nothing is', () => {
    const none = { onTimeRate: null, acceptanceRate: null, rating: null, linkSurvival30d: null, linkSurvival60d: null, verificationPassRate: null };
    expect(trackRecordPart({ ...none, onTimeRate: 1, acceptanceRate: 0.5, rating: 4.5 })).toBeCloseTo((1 + 0.5 + 0.9) / 3);
    expect(trackRecordPart({ ...none, rating: 4 })).toBeCloseTo(0.8);
    expect(trackRecordPart(none)).toBe(0.5);
    // Link survival counts once, the 60-day figure when known; the verification pass rate too.
    expect(trackRecordPart({ ...none, rating: 4, linkSurvival30d: 0.6 })).toBeCloseTo((0.8 + 0.6) / 2);
    expect(trackRecordPart({ ...none, rating: 4, linkSurvival30d: 0.6, linkSurvival60d: 0.2 })).toBeCloseTo((0.8 + 0.2) / 2);
    expect(trackRecordPart({ ...none, onTimeRate: 1, linkSurvival60d: 0.5, verificationPassRate: 0.9 })).toBeCloseTo((1 + 0.5 + 0.9) / 3);
    expect(trackRecordPart({ ...none, verificationPassRate: 0 })).toBe(0);
  });

  it('cost: the share of the budget an offer leaves', () => {
    expect(costPart(25_00, 100_00)).toBeCloseTo(0.75);
    expect(costPart(100_00, 100_00)).toBe(0);
  });
});

describe('words and explanations', () => {
  it('takes letters and digits only, lower-cased, deduplicated, two characters or more, stop words dropped (as search reads text)', () => {
    const words = (goal: string) => termsOf(goal).map((t) => t.word);
    expect(words("Launch our TRAVEL app: travel & 'hotels' | !x (2026) a")).toEqual(['launch', 'travel', 'app', 'hotels', '2026']);
    expect(words('Café über straße')).toEqual(['café', 'über', 'straße']);
    // Quotes make no phrase in a goal: every word stays an alternative, stop words still dropped.
    expect(words('"the rocky mountain" travel')).toEqual(['rocky', 'mountain', 'travel']);
  });

  it('looks a word up with its singular or plural, drops stop words and merges forms of one word', () => {
    expect(formsOf('families')).toEqual(['families', 'family']);
    expect(formsOf('hotel')).toEqual(['hotel', 'hotels']);
    expect(formsOf('hotels')).toEqual(['hotels', 'hotel']);
    expect(formsOf('boxes')).toEqual(['boxes', 'box', 'boxe']);
    expect(formsOf('business')).toEqual(['business', 'businesss']);
    expect(formsOf('city')).toEqual(['city', 'cities']);
    const terms = termsOf('The best hotels for our families and a hotel', 'Parents of families');
    expect(terms.map((t) => [t.word, t.fromAudience])).toEqual([
      ['best', false],
      ['hotels', false],
      ['families', false],
      ['parents', true],
    ]);
    expect(termsOf('the and of').length).toBe(0);
    // The goal gives at most the search's 12 words of one text; the audience fills up to 16.
    const many = (p: string) => Array.from({ length: 40 }, (_, i) => `${p}${i}`).join(' ');
    expect(termsOf(many('word')).length).toBe(12);
    expect(termsOf(many('word'), many('reader')).length).toBe(16);
  });

  it('explains a pick with matched words, traffic, track record and cost', () => {
    const why = whyPicked({
      matches: [
        { word: 'travel', where: 'topics', fromAudience: false },
        { word: 'hotels', where: 'description', fromAudience: false },
        { word: 'families', where: 'description', fromAudience: true },
      ],
      outlet: { monthly_visits: 1_234_567, traffic_verified: true, base_on_time_rate: 0.98, base_acceptance_rate: null, base_rating: 4.6 },
      offer: { format: 'guest_post', price: 12_000 },
      budgetCents: 50_000,
      fmt: (c) => `$${(c / 100).toFixed(2)}`,
    });
    expect(why).toBe(
      "Matches 'travel' in its topics, 'hotels' and 'families' (audience) in its description; 1.2M verified monthly visits; " +
        '98% on time, rated 4.6/5; Guest post for $120.00 of your $500.00 budget.',
    );
    const base = { monthly_visits: 1_000, traffic_verified: false, base_on_time_rate: null, base_acceptance_rate: null, base_rating: null };
    const record = (o: Record<string, number | null>) =>
      whyPicked({ matches: [], outlet: { ...base, ...o }, offer: { format: 'guest_post', price: 100 }, budgetCents: 100, fmt: () => '$1.00' }).split('; ')[2];
    expect(record({ link_survival_30d: 0.9, link_survival_60d: 0.75, verification_pass_rate: 1 })).toBe('75% of links alive at 60 days, 100% passed their first check');
    expect(record({ link_survival_30d: 0.5, link_survival_60d: null, verification_pass_rate: null })).toBe('50% of links alive at 30 days');
    expect(record({ link_survival_30d: null, link_survival_60d: null, verification_pass_rate: null })).toBe('no track record yet');
  });
});
