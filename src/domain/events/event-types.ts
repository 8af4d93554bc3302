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
/** An agent's spending action waiting for a person, and what became of it (docs/approvals.md). */
export const approvalEventTypes = [
  'approval_request.created',
  'approval_request.approved',
  'approval_request.declined',
  'approval_request.expired',
  'approval_request.cancelled',
  'approval_request.failed',
] as const;
export const eventTypes = [
  ...orderEventTypes,
  'order.message_received',
  'workspace.topped_up',
  // Adding funds (docs/billing.md): a top-up request's money received, and a staff adjustment.
  'balance.topped_up',
  'balance.adjusted',
  // Payouts (docs/billing.md): a publisher's payout asked for, sent by staff, or failed (the money back in payable).
  'payout.requested',
  'payout.sent',
  'payout.failed',
  'key.budget_exhausted',
  'webhook_endpoint.disabled',
  ...approvalEventTypes,
] as const;
export type ApprovalEventType = (typeof approvalEventTypes)[number];
export type OrderEventType = (typeof orderEventTypes)[number];
export type EventType = (typeof eventTypes)[number];

/** Who caused an event: one of the parties, or the service itself (deadlines, top-ups, the delivery worker). */
export const eventActors = ['buyer', 'publisher', 'system'] as const;
export type EventActor = (typeof eventActors)[number];

/** Whose feed and endpoints an event goes to: a workspace (its buyers) or a publisher. */
export type EventOwner = Viewer;

/** Events only a workspace receives: its balance, its keys' budgets and its approval requests are no publisher's. */
const workspaceOnlyEventTypes: readonly EventType[] = ['workspace.topped_up', 'balance.topped_up', 'balance.adjusted', 'key.budget_exhausted', ...approvalEventTypes];

/** Events only a publisher receives: its payouts are no workspace's. */
const publisherOnlyEventTypes: readonly EventType[] = ['payout.requested', 'payout.sent', 'payout.failed'];

/** The event types `owner` may receive (what its endpoints and feed filters may name). */
export function receivableEventTypes(owner: EventOwner): readonly EventType[] {
  return owner.party === 'publisher' ? eventTypes.filter((t) => !workspaceOnlyEventTypes.includes(t)) : eventTypes.filter((t) => !publisherOnlyEventTypes.includes(t));
}

/**
 * Refuses event types `owner` can never receive (a publisher's endpoint or feed filter naming a
 * workspace's own event), a 422 naming `field`, rather than an endpoint or a filter that stays
 * silent forever.
 */
export function requireReceivable(owner: EventOwner, types: readonly EventType[] | undefined, field: string): void {
  if (!types) return;
  if (owner.party === 'publisher') {
    const never = types.filter((t) => workspaceOnlyEventTypes.includes(t));
    if (never.length) throw invalidInput({ [field]: [`a publisher never receives ${never.join(', ')}: only a workspace does`] });
  } else {
    const never = types.filter((t) => publisherOnlyEventTypes.includes(t));
    if (never.length) throw invalidInput({ [field]: [`a workspace never receives ${never.join(', ')}: only a publisher does`] });
  }
}

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
