import { z } from 'zod';
import { httpUrl } from '../http-url.js';
import { contentByValues, countryCode, languageCode, linkTypes, offerFormat, outletType, topicSlug } from './enums.js';

/** One offer as a publisher supplies it (import line, generator output). */
export const offerInput = z
  .object({
    format: offerFormat,
    title: z.string().trim().min(3).max(200),
    publisher_price_cents: z.number().int().min(100).max(100_000_000),
    turnaround_days: z.number().int().min(1).max(90),
    content_by: z.enum(contentByValues),
    min_words: z.number().int().min(0).max(20_000),
    max_words: z.number().int().min(1).max(50_000),
    max_links: z.number().int().min(0).max(20),
    link_type: z.enum(linkTypes),
    sponsored_label: z.boolean(),
    permanent: z.boolean(),
    active: z.boolean().optional(),
  })
  .strict()
  .refine((o) => o.max_words >= o.min_words, { path: ['max_words'], message: 'must be at least min_words' });

/** One outlet as a publisher supplies it: a line of `outlets import`. */
export const outletInput = z
  .object({
    name: z.string().trim().min(2).max(200),
    domain: z
      .string()
      .trim()
      .toLowerCase()
      .max(253)
      .regex(/^(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))+$/, 'must be a domain name like example.com'),
    url: httpUrl.optional(),
    description: z.string().trim().min(1).max(5000),
    type: outletType,
    country: countryCode,
    language: languageCode,
    topics: z
      .array(topicSlug)
      .max(20)
      .refine((t) => new Set(t).size === t.length, 'must not repeat a topic'),
    traffic: z.object({ monthly_visits: z.number().int().min(0).max(10_000_000_000), verified: z.boolean() }).strict(),
    offers: z.array(offerInput).min(1).max(20),
  })
  .strict();

export type OfferInput = z.infer<typeof offerInput>;
export type OutletInput = z.infer<typeof outletInput>;
