import { sql, type SQL } from 'drizzle-orm';
import {
  bigint,
  boolean,
  char,
  customType,
  index,
  integer,
  numeric,
  pgEnum,
  pgTable,
  serial,
  text,
  timestamp,
} from 'drizzle-orm/pg-core';
import { outletTypes } from '../../common/enums.js';
import { publishers } from './publishers.js';

export const outletType = pgEnum('outlet_type', outletTypes);

const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });

export const outlets = pgTable(
  'outlets',
  {
    id: serial('id').primaryKey(),
    publisherId: integer('publisher_id')
      .notNull()
      .references(() => publishers.id),
    name: text('name').notNull(),
    domain: text('domain').notNull().unique(),
    url: text('url').notNull(),
    description: text('description').notNull(),
    type: outletType('type').notNull(),
    country: char('country', { length: 2 }).notNull(),
    language: char('language', { length: 2 }).notNull(),
    topics: text('topics').array().notNull().default([]),
    monthlyVisits: bigint('monthly_visits', { mode: 'number' }).notNull(),
    trafficVerified: boolean('traffic_verified').notNull().default(false),
    trafficVerifiedAt: timestamp('traffic_verified_at', { withTimezone: true }),
    // Stored track-record baseline, shown until the outlet has real orders.
    baseOrdersCompleted: integer('base_orders_completed').notNull().default(0),
    baseOnTimeRate: numeric('base_on_time_rate', { precision: 4, scale: 3, mode: 'number' }),
    baseAcceptanceRate: numeric('base_acceptance_rate', { precision: 4, scale: 3, mode: 'number' }),
    baseAvgTurnaroundDays: numeric('base_avg_turnaround_days', { precision: 5, scale: 1, mode: 'number' }),
    baseRating: numeric('base_rating', { precision: 2, scale: 1, mode: 'number' }),
    // Ranked full-text search: name and domain weigh most, then topics, then the description.
    searchVector: tsvector('search_vector')
      .notNull()
      .generatedAlwaysAs(
        (): SQL => sql`setweight(to_tsvector('simple', ${outlets.name}), 'A')
          || setweight(to_tsvector('simple', replace(${outlets.domain}, '.', ' ')), 'A')
          || setweight(to_tsvector('simple', immutable_array_to_string(${outlets.topics}, ' ')), 'B')
          || setweight(to_tsvector('english', ${outlets.description}), 'C')`,
      ),
    // Name and domain alone (the name also stemmed, so "stories" finds a name with "Story"): the
    // search ranks outlets whose name or domain holds every word above those matching through
    // topics or description (docs/search.md).
    nameVector: tsvector('name_vector')
      .notNull()
      .generatedAlwaysAs(
        (): SQL => sql`to_tsvector('simple', ${outlets.name}) || to_tsvector('english', ${outlets.name})
          || to_tsvector('simple', replace(${outlets.domain}, '.', ' '))`,
      ),
    // The cheapest active offer, overall and per format (null: none), kept with the offers in the
    // same transaction. The listing filters and sorts on these columns from single-table indexes.
    minPriceAny: bigint('min_price_any', { mode: 'number' }),
    minPriceGuestPost: bigint('min_price_guest_post', { mode: 'number' }),
    minPriceSponsoredArticle: bigint('min_price_sponsored_article', { mode: 'number' }),
    minPriceLinkInsertion: bigint('min_price_link_insertion', { mode: 'number' }),
    minPricePressRelease: bigint('min_price_press_release', { mode: 'number' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('outlets_min_price_any_idx').on(t.minPriceAny, t.id),
    index('outlets_min_price_guest_post_idx').on(t.minPriceGuestPost, t.id),
    index('outlets_min_price_sponsored_article_idx').on(t.minPriceSponsoredArticle, t.id),
    index('outlets_min_price_link_insertion_idx').on(t.minPriceLinkInsertion, t.id),
    index('outlets_min_price_press_release_idx').on(t.minPricePressRelease, t.id),
    index('outlets_publisher_idx').on(t.publisherId),
    index('outlets_search_idx').using('gin', t.searchVector),
    index('outlets_name_vector_idx').using('gin', t.nameVector),
    // The search's first tier: a query that is an outlet's whole name.
    index('outlets_lower_name_idx').on(sql`lower(${t.name})`),
    index('outlets_name_trgm_idx').using('gin', sql`${t.name} gin_trgm_ops`),
    index('outlets_domain_trgm_idx').using('gin', sql`${t.domain} gin_trgm_ops`),
    index('outlets_topics_idx').using('gin', t.topics),
    index('outlets_traffic_idx').on(t.monthlyVisits.desc(), t.id.desc()),
    // In the listing's order within one value (traffic, then id: a search's walk reads them in
    // that order); min_price_any rides along so counts of a broad filter are index-only scans.
    index('outlets_country_traffic_idx').on(t.country, t.monthlyVisits.desc(), t.id.desc(), t.minPriceAny),
    index('outlets_type_traffic_idx').on(t.type, t.monthlyVisits.desc(), t.id.desc(), t.minPriceAny),
    index('outlets_language_traffic_idx').on(t.language, t.monthlyVisits.desc(), t.id.desc(), t.minPriceAny),
    index('outlets_verified_traffic_idx').on(t.trafficVerified, t.monthlyVisits.desc(), t.id.desc(), t.minPriceAny),
  ],
);

/**
 * The words (lexemes of letters only) of outlets.search_vector, for typo tolerance: a query word
 * found nowhere is matched through the terms within a small edit distance of it. Filled by a statement trigger on
 * outlets (custom migration), so a new outlet's words are known in the transaction that adds it;
 * terms no outlet uses any more stay and simply match nothing.
 */
export const searchTerms = pgTable(
  'search_terms',
  { term: text('term').primaryKey() },
  (t) => [
    index('search_terms_length_idx').on(sql`length(${t.term})`, t.term),
    // Completions of the last word typed (LIKE 'word%'), whatever the database's collation.
    index('search_terms_prefix_idx').on(sql`${t.term} text_pattern_ops`),
  ],
);
