import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type pg from 'pg';
import { z } from 'zod';
import { usdToCents } from '../../domain/money/format.js';
import { countryCode, offerFormats } from '../../domain/outlets/enums.js';
import { SELECTION_SUMMARY } from '../../domain/planning/candidates.js';
import { OPTIMISER_SUMMARY } from '../../domain/planning/knapsack.js';
import { isLanguageCode, MIN_WORDS_TO_DETECT } from '../../domain/planning/language.js';
import { planCampaign } from '../../domain/planning/planner.js';
import { SCORE_FORMULA } from '../../domain/planning/score.js';
import type { Clock } from '../../domain/clock.js';
import { workspacePrincipal } from '../plugins/auth.js';
import { idempotentRead } from '../plugins/idempotency.js';
import { authErrors, bearerSecurity, errorResponses } from '../schemas/common.js';
import { usdAmount } from '../schemas/usd.js';
import { offerSchema, outletDetail } from '../schemas/outlets.js';

const languageMessage = 'must be an ISO 639-1 language code';
const languageCode = z
  .string({ error: languageMessage })
  .regex(/^[A-Za-z]{2}$/, languageMessage)
  .transform((c) => c.toLowerCase())
  .refine(isLanguageCode, languageMessage);

const FIELDS = 'goal, budget_usd, audience, countries, languages, formats, project_id';

export const planBody = z.strictObject(
  {
    goal: z
      .string()
      .trim()
      .min(3, 'must be at least 3 characters')
      .max(500, 'must be at most 500 characters')
      .describe('What the placements should achieve, in plain words; its words are matched against outlet names, topics and descriptions.'),
    budget_usd: usdAmount('must be a finite number of US dollars')
      .describe('The most the plan may cost, fees included, in decimal US dollars (rounded half-up to cents).'),
    audience: z
      .string({ error: 'must be a string' })
      .trim()
      .max(500, 'must be at most 500 characters')
      .optional()
      .describe('Who should read the placements; its words count half as much as the goal’s.'),
    countries: z
      .array(countryCode, { error: 'must be an array of ISO 3166-1 alpha-2 country codes' })
      .max(250, 'must list at most 250 countries')
      .optional()
      .describe('Only outlets in these countries (ISO 3166-1 alpha-2). Omitted or empty: any country.'),
    languages: z
      .array(languageCode, { error: 'must be an array of ISO 639-1 language codes' })
      .max(200, 'must list at most 200 languages')
      .optional()
      .describe(
        'Only outlets written in these languages (ISO 639-1, any case). Omitted or empty: the language of the goal when it can be told ' +
          `(a sentence of at least ${MIN_WORDS_TO_DETECT} words that the detector is sure of), else any language; \`message\` says which applied.`,
      ),
    formats: z
      .array(z.enum(offerFormats, { error: `must be one of ${offerFormats.join(', ')}` }), { error: 'must be an array of offer formats' })
      .max(offerFormats.length * 4, 'has too many entries')
      .optional()
      .describe('Only offers of these formats. Omitted or empty: any format.'),
    project_id: z
      .number({ error: 'must be an integer id' })
      .int('must be an integer id')
      .min(1, 'must be a positive integer id')
      .max(2_147_483_647, 'must be a positive integer id')
      .optional()
      .describe("A project of the caller's workspace this plan is for (checked; the plan itself is not stored)."),
  },
  { error: (issue) => (issue.code === 'unrecognized_keys' ? `unknown field(s) ${issue.keys.join(', ')}; a plan takes ${FIELDS}` : undefined) },
);

const money = (what: string) => z.number().int().describe(`${what}, in US cents.`);

export const planData = z.object({
  goal: z.string(),
  budget_cents: money('The budget'),
  budget_cents_formatted: z.string(),
  total_cents: money('What the picked offers cost together, fees included; never above budget_cents'),
  total_cents_formatted: z.string(),
  remaining_cents: money('budget_cents − total_cents'),
  remaining_cents_formatted: z.string(),
  items: z
    .array(
      z.object({
        outlet: outletDetail.omit({ offers: true }),
        offer: offerSchema,
        score: z.number().describe('0..100, see the formula in the operation description.'),
        why: z.string().describe('A sentence naming what earned the pick: matched words, traffic, track record, cost.'),
      }),
    )
    .describe('The picks, best score first; at most one offer per outlet.'),
  offer_ids: z.array(z.number().int()).describe('The picked offer ids, in item order; can be sent as is to POST /api/v1/orders.'),
  message: z
    .string()
    .describe('How many outlets were picked, or why the plan is empty or short; its last sentence names the languages the plan kept to and why.'),
}).meta({ id: 'Plan', description: 'Offers picked for a goal within a budget; nothing is bought.' });

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
  `Unknown body fields are refused (422 naming them), so a misspelt filter never widens a plan silently. Fields: ${FIELDS}.`,
].join('\n');

export const planRoutes: FastifyPluginAsyncZod<{ pool: pg.Pool; clock: Clock }> = async (app, { pool, clock }) => {
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
        response: { 200: z.object({ data: planData }), ...errorResponses(...authErrors, 400, 413, 422) },
      },
    },
    idempotentRead({ pool, clock }, async (request) => {
      const { goal, budget_usd, audience, countries, languages, formats, project_id } = request.body as z.infer<typeof planBody>;
      const data = await planCampaign(pool, workspacePrincipal(request), {
        goal,
        budgetCents: usdToCents(budget_usd),
        audience,
        countries,
        languages,
        formats,
        projectId: project_id,
      });
      return { status: 200, body: { data } };
    }),
  );
};
