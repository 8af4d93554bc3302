/**
 * Multiple-choice 0/1 knapsack: pick at most one option from each group so that the summed cost
 * stays within the budget and the summed value is as large as possible.
 *
 * Solved by dynamic programming over the budget, counted in units of the costs' greatest common
 * divisor (prices are often whole dollars or dimes, so a unit is often 10 or 100 cents): every
 * cost is a whole number of units, and a selection fits the budget exactly when it fits
 * floor(budget / unit) units, so the answer is exact. Only when that still leaves more than
 * `maxSteps` steps is the unit made coarser (a multiple of the divisor) and every cost rounded UP
 * to whole units, so any selection the table admits also fits the budget in exact cents
 * (Σ ceil(cost/u)·u ≤ floor(budget/u)·u ≤ budget); the selection is then optimal for the rounded
 * costs, a last pass spends what rounding left over on groups not yet picked, and the total is
 * re-checked in exact cents.
 */

/** For the API description and docs/planner.md. */
export const OPTIMISER_SUMMARY =
  'The plan maximises the summed score of its picks: a multiple-choice 0/1 knapsack (at most one offer per outlet) solved by ' +
  "dynamic programming over the budget, counted in units of the candidate prices' greatest common divisor (often 10 or 100 " +
  'cents), which is exact while the budget has at most 2,000–20,000 such units (fewer with more offers, so the table stays at ' +
  'a few million cells). Above that the units are coarser and prices are rounded up to whole units, so the total can never ' +
  'exceed the budget; cents the rounding leaves over go to the best remaining outlets, and the total is re-checked in exact ' +
  'cents. A plan picks at most 50 outlets (what one order request takes): when the optimum picks more, each pick is priced ' +
  'until it picks at most 50. Picks are listed best score first.';

export interface KnapsackOption {
  /** Integer cents, ≥ 0. */
  cost: number;
  /** Non-negative; what the selection maximises. */
  value: number;
}

export interface KnapsackResult<T extends KnapsackOption> {
  picks: T[];
  totalCost: number;
  totalValue: number;
  /** Cents per DP step: a divisor of every cost when exact, coarser otherwise (1 when no table was needed). */
  unit: number;
  /** Whether the selection is optimal (false only when the budget needed coarse units). */
  exact: boolean;
}

export interface KnapsackOptions {
  /** Upper bound on DP capacity steps; default adapts to the number of options (2,000..20,000). */
  maxSteps?: number;
}

/** Keeps the table (groups × steps) at a few million cells: ~10 ms of work, a few MB. */
export function defaultSteps(optionCount: number): number {
  return Math.min(20_000, Math.max(2_000, Math.floor(4_000_000 / Math.max(1, optionCount))));
}

const EPS = 1e-9;

/** A group's most valuable option, the cheaper of two as valuable. */
function bestOf<T extends KnapsackOption>(group: readonly T[]): T {
  return group.reduce((a, b) => (b.value > a.value || (b.value === a.value && b.cost < a.cost) ? b : a));
}

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

export function solveMultipleChoiceKnapsack<T extends KnapsackOption>(
  groups: readonly (readonly T[])[],
  budgetCents: number,
  opts: KnapsackOptions = {},
): KnapsackResult<T> {
  const budget = Math.max(0, Math.floor(budgetCents));
  // Options that can never be part of a plan are dropped first; empty groups disappear.
  const live = groups
    .map((g) => g.filter((o) => Number.isFinite(o.cost) && o.cost >= 0 && o.cost <= budget && o.value > 0))
    .filter((g) => g.length > 0);
  // When the budget covers every group's best option, that is the optimum: no table needed.
  const everyBest = live.map(bestOf);
  const everyBestCost = everyBest.reduce((s, o) => s + o.cost, 0);
  if (everyBestCost <= budget) {
    return { picks: everyBest, totalCost: everyBestCost, totalValue: everyBest.reduce((s, o) => s + o.value, 0), unit: 1, exact: true };
  }

  const optionCount = live.reduce((n, g) => n + g.length, 0);
  const steps = Math.max(1, Math.floor(opts.maxSteps ?? defaultSteps(optionCount)));
  const divisor = live.flat().reduce((d, o) => (o.cost > 0 ? gcd(d, o.cost) : d), 0) || 1;
  const unit = divisor * Math.max(1, Math.ceil(budget / divisor / steps));
  const cap = Math.floor(budget / unit);
  const weight = (o: T) => Math.ceil(o.cost / unit);

  // best[c]: the largest value reachable with weight ≤ c using the groups seen so far.
  let best = new Float64Array(cap + 1);
  // choice[g][c]: index of the option taken from group g at capacity c, or -1 for none.
  const wide = live.some((g) => g.length > 127);
  const choice = live.map(() => (wide ? new Int32Array(cap + 1) : new Int8Array(cap + 1)).fill(-1));
  live.forEach((group, g) => {
    const next = Float64Array.from(best);
    const row = choice[g]!;
    group.forEach((option, i) => {
      const w = weight(option);
      for (let c = cap; c >= w; c--) {
        const candidate = best[c - w]! + option.value; // `best` is the previous row: one option per group
        if (candidate > next[c]! + EPS) {
          next[c] = candidate;
          row[c] = i;
        }
      }
    });
    best = next;
  });

  // The cheapest capacity that reaches the best value, then walk the choices back.
  let c = cap;
  while (c > 0 && best[c - 1]! >= best[cap]! - EPS) c--;
  const picked = new Set<number>();
  const picks: T[] = [];
  for (let g = live.length - 1; g >= 0; g--) {
    const i = choice[g]![c]!;
    if (i < 0) continue;
    const option = live[g]![i]!;
    picks.push(option);
    picked.add(g);
    c -= weight(option);
  }

  // Rounding costs up can leave cents unused: give them to the best remaining groups.
  let totalCost = picks.reduce((s, o) => s + o.cost, 0);
  if (unit > divisor) {
    const rest = live
      .map((group, g) => ({ g, group }))
      .filter(({ g }) => !picked.has(g))
      .map(({ group }) => [...group].sort((a, b) => b.value - a.value || a.cost - b.cost))
      .sort((a, b) => b[0]!.value - a[0]!.value);
    for (const group of rest) {
      const option = group.find((o) => totalCost + o.cost <= budget);
      if (option) {
        picks.push(option);
        totalCost += option.cost;
      }
    }
  }
  if (totalCost > budget) throw new Error(`knapsack exceeded its budget: ${totalCost} > ${budget}`);
  return { picks, totalCost, totalValue: picks.reduce((s, o) => s + o.value, 0), unit, exact: unit === divisor };
}

// A capped plan solves the table about 14 times: at 1,000 steps each solve is a fraction of a
// full one (docs/planner.md has the measurements: within 1.2% of the full table's value).
const CAPPED_STEPS = 1000;

/**
 * The same problem with at most `maxPicks` groups picked; `capped` says whether the limit changed
 * the answer. When the best option of each of the `maxPicks` most valuable groups fits, that is the
 * optimum. Otherwise a count in the table would multiply its size by maxPicks, so the count is
 * priced instead (Lagrangian relaxation): each pick costs λ of value, and the smallest λ whose
 * optimum picks few enough is found by bisection over whole values (scores in hundredths). Picks
 * left free go, best value first, to groups not yet picked whose option still fits. Near-optimal
 * rather than optimal, and only run when the plain optimum picks too many.
 */
export function solveMultipleChoiceKnapsackAtMost<T extends KnapsackOption>(
  groups: readonly (readonly T[])[],
  budgetCents: number,
  maxPicks: number,
  opts: KnapsackOptions = {},
): KnapsackResult<T> & { capped: boolean } {
  const plain = solveMultipleChoiceKnapsack(groups, budgetCents, opts);
  if (plain.picks.length <= maxPicks) return { ...plain, capped: false };
  const bests = groups
    .filter((g) => g.some((o) => o.value > 0))
    .map(bestOf)
    .sort((a, b) => b.value - a.value || a.cost - b.cost);
  const top = bests.slice(0, maxPicks);
  const topCost = top.reduce((sum, o) => sum + o.cost, 0);
  if (topCost <= budgetCents) {
    return { picks: top, totalCost: topCost, totalValue: top.reduce((sum, o) => sum + o.value, 0), unit: 1, exact: true, capped: true };
  }
  const priced = (lambda: number) =>
    solveMultipleChoiceKnapsack(
      groups.map((g) => g.map((option) => ({ option, cost: option.cost, value: option.value - lambda }))),
      budgetCents,
      { maxSteps: opts.maxSteps ?? CAPPED_STEPS },
    );
  const smallestLambda = (low: number, high: number) => {
    // low picks too many, high picks few enough
    while (high - low > 1) {
      const mid = Math.floor((low + high) / 2);
      if (priced(mid).picks.length <= maxPicks) high = mid;
      else low = mid;
    }
    return high;
  };
  // At λ = the (maxPicks + 1)-th largest best value, at most maxPicks groups keep an option worth
  // more than λ: the bisection starts from there rather than from the largest value.
  const lambda = smallestLambda(0, Math.ceil(bests[maxPicks]?.value ?? 0) || 1);
  const best = priced(lambda);
  const picks = best.picks.map((p) => p.option);
  let totalCost = best.totalCost;
  const taken = new Set(picks);
  const pickedGroups = new Set(groups.flatMap((g, i) => (g.some((o) => taken.has(o)) ? [i] : [])));
  const rest = groups
    .flatMap((g, i) => (pickedGroups.has(i) ? [] : [[...g].sort((a, b) => b.value - a.value || a.cost - b.cost)]))
    .filter((g) => g.length > 0 && g[0]!.value > 0)
    .sort((a, b) => b[0]!.value - a[0]!.value);
  for (const group of rest) {
    if (picks.length >= maxPicks) break;
    const option = group.find((o) => o.value > 0 && totalCost + o.cost <= budgetCents);
    if (option) {
      picks.push(option);
      totalCost += option.cost;
    }
  }
  if (totalCost > budgetCents) throw new Error(`knapsack exceeded its budget: ${totalCost} > ${budgetCents}`);
  const totalValue = picks.reduce((sum, o) => sum + o.value, 0);
  // The plain optimum's maxPicks most valuable picks always fit too; with few picks allowed the
  // priced search can land far below them (one pick where two fit), so the better answer is kept.
  const trimmed = [...plain.picks].sort((a, b) => b.value - a.value || a.cost - b.cost).slice(0, maxPicks);
  const trimmedValue = trimmed.reduce((sum, o) => sum + o.value, 0);
  if (trimmedValue > totalValue) {
    return { picks: trimmed, totalCost: trimmed.reduce((sum, o) => sum + o.cost, 0), totalValue: trimmedValue, unit: plain.unit, exact: false, capped: true };
  }
  return { picks, totalCost, totalValue, unit: best.unit, exact: false, capped: true };
}
