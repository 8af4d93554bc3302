import { invalidInput } from '../errors.js';
import type { Viewer } from '../parties.js';

/** Every event type, in the order the API documents them. */
export const orderEventTypes = [
  'order.placed',
  'order.content_submitted',
  'order.accepted',
  'order.declined',
  'order.draft_submitted',
  'order.draft_approved',
  'order.published',
  'order.completed',
  'order.cancelled',
  'order.expired',
  'order.live_check_failed',
  'order.link_lost',
  'order.link_restored',
  'order.link_refunded',
] as const;
export const eventTypes = [...orderEventTypes, 'order.message_received', 'workspace.topped_up', 'key.budget_exhausted', 'webhook_endpoint.disabled'] as const;
export type OrderEventType = (typeof orderEventTypes)[number];
export type EventType = (typeof eventTypes)[number];

/** Who caused an event: one of the parties, or the service itself (deadlines, top-ups, the delivery worker). */
export const eventActors = ['buyer', 'publisher', 'system'] as const;
export type EventActor = (typeof eventActors)[number];

/** Whose feed and endpoints an event goes to: a workspace (its buyers) or a publisher. */
export type EventOwner = Viewer;

export const ownerColumn = (owner: EventOwner) => (owner.party === 'buyer' ? 'workspace_id' : 'publisher_id');
export const ownerId = (owner: EventOwner) => (owner.party === 'buyer' ? owner.workspaceId : owner.publisherId);

// Fixed width, so the ids sort as text in the order they sort as numbers.
const ID_DIGITS = 16;
const ID_PATTERN = /^evt_(\d{16})$/;

/** The public id of the event at `position` in the feed. */
export const eventId = (position: number) => `evt_${String(position).padStart(ID_DIGITS, '0')}`;

/** The feed position an event id names; a 422 naming `field` when it names none. */
export function positionOf(id: string, field: string): number {
  const m = ID_PATTERN.exec(id);
  if (!m) throw invalidInput({ [field]: [`must be an event id (evt_ followed by ${ID_DIGITS} digits)`] });
  return Number(m[1]);
}
