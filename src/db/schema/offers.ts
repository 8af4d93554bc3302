import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  index,
  integer,
  pgEnum,
  pgTable,
  serial,
  text,
  timestamp,
} from 'drizzle-orm/pg-core';
import { contentByValues, linkTypes, offerFormats } from '../../common/enums.js';
import { outlets } from './outlets.js';

export const offerFormat = pgEnum('offer_format', offerFormats);
export const contentBy = pgEnum('content_by', contentByValues);
export const linkType = pgEnum('link_type', linkTypes);

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
