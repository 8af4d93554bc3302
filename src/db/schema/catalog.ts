import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  char,
  check,
  index,
  integer,
  pgEnum,
  pgTable,
  serial,
  text,
  timestamp,
  uuid,
} from 'drizzle-orm/pg-core';
import { fxRates } from './fx.js';
import { workspaces } from './workspaces.js';

// The seller API: the digital goods a workspace sells, and the purchases of them.

export const itemKind = pgEnum('item_kind', ['software', 'graphics', 'video', 'audio', 'other']);
export const licenseType = pgEnum('license_type', ['regular', 'extended']);

export const items = pgTable(
  'items',
  {
    id: serial('id').primaryKey(),
    workspaceId: integer('workspace_id')
      .notNull()
      .references(() => workspaces.id),
    kind: itemKind('kind').notNull(),
    name: text('name').notNull(),
    description: text('description').notNull(),
    category: text('category').notNull(),
    subCategory: text('sub_category').notNull(),
    options: text('options').array().notNull().default([]),
    version: text('version').notNull(),
    demoLink: text('demo_link').notNull(),
    tags: text('tags').array().notNull().default([]),
    thumbnailUrl: text('thumbnail_url').notNull(),
    // Media presence follows the kind (seed table): no preview image for audio, a video preview
    // only for video, an audio preview only for audio; screenshots only when there are some.
    previewImageUrl: text('preview_image_url'),
    previewVideoUrl: text('preview_video_url'),
    previewAudioUrl: text('preview_audio_url'),
    screenshots: text('screenshots').array().notNull().default([]),
    // Minor units (cents) of `currency`.
    priceRegularCents: bigint('price_regular_cents', { mode: 'number' }).notNull(),
    priceExtendedCents: bigint('price_extended_cents', { mode: 'number' }).notNull(),
    currency: char('currency', { length: 3 })
      .notNull()
      .default('USD')
      .references(() => fxRates.currency),
    publishedAt: timestamp('published_at', { withTimezone: true }).notNull().defaultNow(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('items_workspace_idx').on(t.workspaceId, t.id),
    index('items_currency_idx').on(t.currency),
    check('items_version_semver', sql`${t.version} ~ '^[0-9]+\\.[0-9]+\\.[0-9]+$'`),
    check('items_prices', sql`${t.priceRegularCents} >= 0 AND ${t.priceExtendedCents} >= 0`),
  ],
);

export const purchases = pgTable(
  'purchases',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    code: uuid('code').notNull().unique(),
    itemId: integer('item_id')
      .notNull()
      .references(() => items.id),
    // The seller, copied from the item so validation is one indexed lookup scoped to the key.
    workspaceId: integer('workspace_id')
      .notNull()
      .references(() => workspaces.id),
    license: licenseType('license').notNull(),
    priceCents: bigint('price_cents', { mode: 'number' }).notNull(),
    currency: char('currency', { length: 3 })
      .notNull()
      .references(() => fxRates.currency),
    supportedUntil: timestamp('supported_until', { withTimezone: true }),
    downloaded: boolean('downloaded').notNull().default(false),
    purchasedAt: timestamp('purchased_at', { withTimezone: true }).notNull().defaultNow(),
    refundedAt: timestamp('refunded_at', { withTimezone: true }),
  },
  (t) => [
    index('purchases_item_idx').on(t.itemId),
    index('purchases_workspace_idx').on(t.workspaceId),
    index('purchases_currency_idx').on(t.currency),
    check('purchases_price', sql`${t.priceCents} >= 0`),
  ],
);
