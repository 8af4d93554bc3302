import type { OrderStatus } from '../common/enums.js';
import type { EventType } from '../domain/events/event-types.js';
import type { Party } from '../domain/parties.js';
import { nextStepOf } from '../domain/orders/next-step.js';
import { turnOf } from '../domain/orders/states.js';

// The words the console shows for the API's codes (docs/console.md, "Words"): one table for
// order states, one for event types, and the next step of each state comes from the domain (orders/next-step.ts).
// The API keeps its codes; pages show these instead, and webhook pages show both, since a
// receiver is written against the codes.

/** An order's state as a person reads it. */
export const STATUS_WORDS: Record<OrderStatus, string> = {
  awaiting_content: 'Awaiting content',
  awaiting_acceptance: 'Awaiting acceptance',
  writing: 'Writing',
  draft_review: 'Draft review',
  publishing: 'Publishing',
  live_review: 'Live review',
  completed: 'Completed',
  link_lost: 'Link lost',
  declined: 'Declined',
  expired: 'Expired',
  cancelled: 'Cancelled',
  link_refunded: 'Link refunded',
};

/** A state's words; a state this table does not know (a newer server's) shows its code's words rather than failing the page. */
export const statusWords = (s: string) => STATUS_WORDS[s as OrderStatus] ?? s.replace(/_/g, ' ');

/** What happened, for each event type. */
export const EVENT_WORDS: Record<EventType, string> = {
  'order.placed': 'Order placed',
  'order.content_submitted': 'Content submitted',
  'order.accepted': 'Order accepted',
  'order.declined': 'Order declined',
  'order.draft_submitted': 'Draft submitted',
  'order.draft_approved': 'Draft approved',
  'order.published': 'Published',
  'order.completed': 'Completed and paid',
  'order.cancelled': 'Order cancelled',
  'order.expired': 'Order expired',
  'order.live_check_failed': 'Link check failed',
  'order.link_lost': 'Link lost',
  'order.link_restored': 'Link restored',
  'order.link_refunded': 'Refunded for a lost link',
  'order.message_received': 'New message',
  'workspace.topped_up': 'Balance topped up',
  'balance.topped_up': 'Funds added',
  'balance.adjusted': 'Balance adjusted',
  'payout.requested': 'Payout requested',
  'payout.sent': 'Payout sent',
  'payout.failed': 'Payout failed',
  'key.budget_exhausted': 'Key budget used up',
  'webhook_endpoint.disabled': 'Webhook endpoint disabled',
  'approval_request.created': 'Approval requested',
  'approval_request.approved': 'Approval request approved',
  'approval_request.declined': 'Approval request declined',
  'approval_request.expired': 'Approval request expired',
  'approval_request.cancelled': 'Approval request withdrawn',
  'approval_request.failed': 'Approval request failed',
};

export const eventWords = (t: string) => EVENT_WORDS[t as EventType] ?? t.replace(/^[a-z_]+\./, '').replace(/_/g, ' ');

/** The action an event asks of `party`: a message asks for a reply; otherwise the state the event left the order in. */
export function actionWords(type: string, status: string | undefined, party: Party): string {
  if (type === 'order.message_received') return 'Read the message and reply';
  // Each open state is one side's turn, so the state names the action; the side is checked so a
  // row never tells a party to do the other's step.
  const step = status ? nextStepOf(status) : undefined;
  return step && turnOf[status as OrderStatus] === party ? step.title : 'Open the order';
}
