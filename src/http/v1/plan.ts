import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type pg from 'pg';
import { z } from 'zod';
import { usdToCents } from '../../domain/money/format.js';
import { SELECTION_SUMMARY } from '../../domain/planning/candidates.js';
import { OPTIMISER_SUMMARY } from '../../domain/planning/knapsack.js';
import { planCampaign } from '../../domain/planning/planner.js';
import type { SearchEngine } from '../../domain/outlets/search-engine.js';
import { SCORE_FORMULA } from '../../domain/planning/score.js';
import type { Clock } from '../../domain/clock.js';
import { workspacePrincipal } from '../plugins/auth.js';
import { idempotentRead } from '../plugins/idempotency.js';
import { authErrors, bearerSecurity, errorResponses } from '../../schemas/common.js';
import { PLAN_FIELDS, planBody, planData } from '../../schemas/plan.js';

const description = [
  'Builds a plan and buys nothing: no order, hold or ledger entry is written, so a read-only key may plan. ' +
    '`offer_ids` can be sent as they are to `POST /api/v1/orders`. Details: docs/planner.md.',
  '',
  `**Score.** ${SCORE_FORMULA}`,
  '',
  `**Candidates.** ${SELECTION_SUMMARY}`,
  '',
  `**Selection.** ${OPTIMISER_SUMMARY}`,
  '',
  `Unknown body fields are refused (422 naming them), so a misspelt filter never widens a plan silently. Fields: ${PLAN_FIELDS}.`,
].join('\n');

export const planRoutes: FastifyPluginAsyncZod<{ pool: pg.Pool; search: SearchEngine; clock: Clock }> = async (app, { pool, search, clock }) => {
  app.post(
    '/plan',
    {
      config: { idempotency: 'optional' },
      schema: {
        operationId: 'createPlan',
        summary: 'Pick the offers that best serve a goal within a budget: at most one per outlet, never over budget. Buys nothing.',
        description,
        tags: ['Plans'],
        security: bearerSecurity,
        body: planBody,
        response: { 200: z.object({ data: planData }), ...errorResponses(...authErrors, 400, 413, 422, 503) },
      },
    },
    idempotentRead({ pool, clock }, async (request) => {
      const { goal, budget_usd, audience, countries, languages, formats, project_id } = request.body as z.infer<typeof planBody>;
      const data = await planCampaign(pool, search, workspacePrincipal(request), {
        goal,
        budgetCents: usdToCents(budget_usd),
        audience,
        countries,
        languages,
        formats,
        projectId: project_id,
      });
      return data;
    }),
  );
};
