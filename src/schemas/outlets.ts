import { z } from 'zod';
import { contentByValues, countryCode, linkTypes, offerFormat, outletSorts, outletType, topicSlug } from '../domain/outlets/enums.js';
import { usdToCents } from '../domain/money/format.js';
import { pageQuery } from './pagination.js';
import { documentAs } from './param-docs.js';
import { usdQueryParam } from './usd.js';

/** A positive database id as a path writes it: the REST routes' `{id}`, the console's ids. */
export const pathIdText = z
  .string()
  .regex(/^\d+$/, 'must be a positive integer')
  .transform(Number)
  .refine((n) => n >= 1, 'must be a positive integer')
  // Ids are PostgreSQL integers: a larger one is well formed but names nothing that can exist.
  .refine((n) => n <= 2_147_483_647, 'must be at most 2,147,483,647');

/** A positive database id in a path (`{id}`). */
export const idParam = z.object({
  id: documentAs(pathIdText, { type: 'integer', minimum: 1, maximum: 2_147_483_647 }).describe('Numeric id, 1..2147483647.'),
});

/** A true/false query flag, also written 1/0. */
export const boolQuery = () =>
  documentAs(
    z.enum(['true', 'false', '1', '0'], { error: 'must be true, false, 1 or 0' }).transform((v) => v === 'true' || v === '1'),
    { type: 'boolean' },
  );

// Strict: a misspelt or unknown filter is refused rather than silently widening the list.
export const outletListQuery = z.strictObject({
  q: z
    .string()
    .trim()
    .max(200, 'must be at most 200 characters')
    .optional()
    .describe(
      'Search over name, domain, topics and description: every word must match (a quoted "two words" as a phrase), each tolerant of a typo; ' +
        'the last word may be the start of a longer one. An exact name or domain ranks first, then name matches, then the rest; traffic orders within each.',
    ),
  type: outletType.optional().describe('Kind of publication.'),
  format: offerFormat.optional().describe('Only outlets with an active offer of this format; from_price is then that format’s cheapest.'),
  country: countryCode.optional().describe('ISO 3166-1 alpha-2 country code, e.g. US, DE.'),
  language: z
    .string()
    .regex(/^[A-Za-z]{2}$/, 'must be an ISO 639-1 language code')
    .transform((c) => c.toLowerCase())
    .optional()
    .describe('ISO 639-1 language code of the outlet, e.g. en, de (case-insensitive).'),
  topic: topicSlug.optional().describe('A topic slug, e.g. travel, finance.'),
  max_price_usd: documentAs(usdQueryParam.transform(usdToCents), { type: 'number', exclusiveMinimum: 0, maximum: 10_000_000 })
    .optional()
    .describe('Only outlets with an active offer (of `format`, when given) costing at most this, fees included.'),
  verified_traffic: boolQuery()
    .optional()
    .describe('Only outlets whose traffic is (or is not) Google-verified.'),
  min_traffic: documentAs(z.string().regex(/^\d{1,12}$/, 'must be a non-negative integer').transform(Number), {
    type: 'integer',
    minimum: 0,
    maximum: 999_999_999_999,
  })
    .optional()
    .describe('Minimum monthly visits.'),
  sort: z
    .enum(outletSorts)
    .optional()
    .describe(
      'relevance (default with q), traffic, -traffic (default without q), price, -price; ' +
        'link_survival: best link survival first (track_record.link_survival_30d, then _60d, then more links checked), ' +
        'verification: best verification_pass_rate first (then more placements checked); ' +
        'for these two, outlets without the figure follow those with it, and traffic breaks ties.',
    ),
  ...pageQuery,
});

const traffic = z.object({
  monthly_visits: z.number().int(),
  verified: z.boolean().describe('Google-verified traffic.'),
  verified_at: z.string().nullable(),
}).meta({ id: 'Traffic' });

const trackRecord = z
  .object({
    orders_completed: z.number().int(),
    on_time_rate: z.number().nullable(),
    acceptance_rate: z.number().nullable(),
    avg_turnaround_days: z.number().nullable(),
    rating: z.number().nullable(),
    link_survival_30d: z
      .number()
      .nullable()
      .describe('Of the links checked at or after 30 days from completion, the share alive (a refunded lost link counts as not alive); null until one was.'),
    links_checked_30d: z.number().int().describe('Links checked at or after 30 days from completion.'),
    link_survival_60d: z.number().nullable().describe('The same at or after 60 days; null until one was checked.'),
    links_checked_60d: z.number().int().describe('Links checked at or after 60 days from completion.'),
    verification_pass_rate: z
      .number()
      .nullable()
      .describe('Of the placements given their first automatic check after publication, the share that passed; null until one was.'),
    placements_checked: z.number().int().describe('Placements given their first automatic check.'),
  })
  .meta({
    id: 'TrackRecord',
    description:
      'orders_completed to rating: a stored baseline until the outlet has orders here, then computed from them. ' +
      'The link figures have no baseline: they are the marketplace’s own checks of its placements.',
  });

const outletBase = {
  id: z.number().int(),
  name: z.string(),
  domain: z.string(),
  url: z.string(),
  description: z.string(),
  type: outletType,
  country: z.string(),
  language: z.string(),
  topics: z.array(z.string()),
  traffic,
  track_record: trackRecord,
};

export const offerSchema = z.object({
  id: z.number().int(),
  outlet_id: z.number().int(),
  format: offerFormat,
  title: z.string(),
  price: z.number().int().describe('US cents, fees included.'),
  price_formatted: z.string(),
  turnaround_days: z.number().int(),
  content_by: z.enum(contentByValues).describe('Who writes the content: the buyer, or the publisher.'),
  min_words: z.number().int(),
  max_words: z.number().int(),
  max_links: z.number().int(),
  link_type: z.enum(linkTypes),
  sponsored_label: z.boolean(),
  permanent: z.boolean(),
  active: z.boolean(),
}).meta({ id: 'Offer', description: 'Something an outlet sells: a format at a price.' });

export const outletListItem = z.object({
  ...outletBase,
  from_price: z.number().int().describe('US cents: the cheapest active offer matching the format and price filters.'),
  from_price_formatted: z.string(),
}).meta({ id: 'OutletSummary', description: 'An outlet as search lists it, with the price of its cheapest matching offer.' });

export const outletDetail = z
  .object({ ...outletBase, offers: z.array(offerSchema) })
  .meta({ id: 'Outlet', description: 'A publication and the offers it sells.' });
