import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  check,
  index,
  integer,
  jsonb,
  pgEnum,
  pgSequence,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { publishers } from './publishers.js';
import { workspaces } from './workspaces.js';

const oneOwner = (workspaceId: unknown, publisherId: unknown) =>
  sql`(${workspaceId} IS NULL) <> (${publisherId} IS NULL)`;

/** Hands out feed positions; only the sequencer (domain/events/sequencer.ts) calls nextval on it. */
export const eventPositions = pgSequence('event_positions', { startWith: 1 });

/**
 * The transactional outbox: one row per event and party, written in the transaction of the change
 * it describes. Feeds and deliveries see a row only once the sequencer has given it a position.
 */
export const events = pgTable(
  'events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    position: bigint('position', { mode: 'number' }),
    type: text('type').notNull(),
    // Copies, not foreign keys (like orders'): a key lookup would lock the workspace's or the
    // publisher's row in every transaction that records an event; neither is ever deleted.
    workspaceId: integer('workspace_id'),
    publisherId: integer('publisher_id'),
    orderId: bigint('order_id', { mode: 'number' }),
    actor: text('actor').notNull(),
    previousStatus: text('previous_status'),
    data: jsonb('data').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    uniqueIndex('events_position_uq').on(t.position).where(sql`${t.position} IS NOT NULL`),
    index('events_unpositioned_idx').on(t.id).where(sql`${t.position} IS NULL`),
    index('events_workspace_idx').on(t.workspaceId, t.position).where(sql`${t.position} IS NOT NULL AND ${t.workspaceId} IS NOT NULL`),
    index('events_publisher_idx').on(t.publisherId, t.position).where(sql`${t.position} IS NOT NULL AND ${t.publisherId} IS NOT NULL`),
    index('events_order_idx').on(t.orderId, t.position).where(sql`${t.position} IS NOT NULL AND ${t.orderId} IS NOT NULL`),
    check('events_one_owner', oneOwner(t.workspaceId, t.publisherId)),
  ],
);

export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    workspaceId: integer('workspace_id').references(() => workspaces.id),
    publisherId: integer('publisher_id').references(() => publishers.id),
    url: text('url').notNull(),
    // null: every event type.
    eventTypes: text('event_types').array(),
    secret: text('secret').notNull(),
    // Signs too until it expires, so receivers can switch secrets without missing a delivery.
    previousSecret: text('previous_secret'),
    previousSecretExpiresAt: timestamp('previous_secret_expires_at', { withTimezone: true }),
    disabledAt: timestamp('disabled_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    index('webhook_endpoints_workspace_idx').on(t.workspaceId).where(sql`${t.workspaceId} IS NOT NULL`),
    index('webhook_endpoints_publisher_idx').on(t.publisherId).where(sql`${t.publisherId} IS NOT NULL`),
    check('webhook_endpoints_one_owner', oneOwner(t.workspaceId, t.publisherId)),
  ],
);

export const deliveryStatus = pgEnum('webhook_delivery_status', ['pending', 'delivered', 'failed']);

export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    eventId: bigint('event_id', { mode: 'number' })
      .notNull()
      .references(() => events.id, { onDelete: 'cascade' }),
    endpointId: bigint('endpoint_id', { mode: 'number' })
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    status: deliveryStatus('status').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    // When a pending delivery is due; while an attempt is in flight, when its claim lapses.
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }),
    firstAttemptAt: timestamp('first_attempt_at', { withTimezone: true }),
    lastAttemptAt: timestamp('last_attempt_at', { withTimezone: true }),
    lastStatusCode: integer('last_status_code'),
    lastDurationMs: integer('last_duration_ms'),
    lastError: text('last_error'),
    deliveredAt: timestamp('delivered_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    // What the worker polls: due pending deliveries only.
    index('webhook_deliveries_due_idx').on(t.nextAttemptAt).where(sql`${t.status} = 'pending'`),
    index('webhook_deliveries_endpoint_idx').on(t.endpointId, t.id),
    index('webhook_deliveries_event_idx').on(t.eventId),
  ],
);
