import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  index,
  integer,
  pgEnum,
  pgTable,
  primaryKey,
  serial,
  text,
  timestamp,
} from 'drizzle-orm/pg-core';
import { outlets } from './outlets.js';

export const offerFormat = pgEnum('offer_format', ['guest_post', 'sponsored_article', 'link_insertion', 'press_release']);
export const contentBy = pgEnum('content_by', ['buyer', 'publisher']);
export const linkType = pgEnum('link_type', ['dofollow', 'nofollow']);

export const offers = pgTable(
  'offers',
  {
    id: serial('id').primaryKey(),
    outletId: integer('outlet_id')
      .notNull()
      .references(() => outlets.id),
    format: offerFormat('format').notNull(),
    title: text('title').notNull(),
    // What the publisher is paid and the service's fee (rate from configuration, rounded half-up
    // once when the price is set); the buyer pays their sum.
    publisherPriceCents: bigint('publisher_price_cents', { mode: 'number' }).notNull(),
    feeCents: bigint('fee_cents', { mode: 'number' }).notNull(),
    price: bigint('price', { mode: 'number' })
      .notNull()
      .generatedAlwaysAs(sql`publisher_price_cents + fee_cents`),
    turnaroundDays: integer('turnaround_days').notNull(),
    contentBy: contentBy('content_by').notNull(),
    minWords: integer('min_words').notNull(),
    maxWords: integer('max_words').notNull(),
    maxLinks: integer('max_links').notNull(),
    linkType: linkType('link_type').notNull(),
    sponsoredLabel: boolean('sponsored_label').notNull(),
    permanent: boolean('permanent').notNull(),
    active: boolean('active').notNull().default(true),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('offers_outlet_idx').on(t.outletId),
    check('offers_prices_positive', sql`${t.publisherPriceCents} > 0 AND ${t.feeCents} >= 0`),
    check('offers_words', sql`${t.minWords} >= 0 AND ${t.maxWords} >= ${t.minWords}`),
    check('offers_turnaround', sql`${t.turnaroundDays} > 0`),
  ],
);

/**
 * The cheapest active offer of each outlet, per format and over all formats (`format = 'any'`).
 * Maintained with the offers, in the same transaction; it lets the listing filter by format and
 * price and sort by price from one index instead of aggregating offers per request.
 */
export const outletPrices = pgTable(
  'outlet_prices',
  {
    outletId: integer('outlet_id')
      .notNull()
      .references(() => outlets.id),
    format: text('format').notNull(),
    minPrice: bigint('min_price', { mode: 'number' }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.outletId, t.format] }),
    index('outlet_prices_format_price_idx').on(t.format, t.minPrice, t.outletId),
  ],
);
