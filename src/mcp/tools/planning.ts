import { usdToCents } from '../../domain/money/format.js';
import { planCampaign as plan } from '../../domain/planning/planner.js';
import { planBody, planData } from '../../schemas/plan.js';
import { annotations, defineTool } from '../tool.js';

export const planCampaign = defineTool({
  name: 'plan-campaign',
  title: 'Plan a campaign',
  description:
    'Picks the offers that best serve a goal within a budget (budget_usd, US dollars, fees included): at most one offer per outlet, never ' +
    'over budget, honouring countries, languages (by default the goal’s own, when it can be told) and formats, each pick with its score ' +
    'and a sentence saying why. Free; buys, holds and stores nothing, so a read-only key may plan. Show the plan to the user; to buy it, ' +
    'pass its offer_ids to place-orders (which quotes first). `message` says why a plan is empty or short, and which languages it kept to.',
  input: planBody,
  output: planData,
  annotations: annotations.read,
  run: (ctx, { goal, budget_usd, audience, countries, languages, formats, project_id }) =>
    plan(ctx.pool, ctx.search, ctx.principal, { goal, budgetCents: usdToCents(budget_usd), audience, countries, languages, formats, projectId: project_id }),
});
