import type { OrderStatus } from '../common/enums.js';
import type { EventType } from '../domain/events/event-types.js';
import type { Party } from '../domain/parties.js';

// The words the console shows for the API's codes (docs/console.md, "Words"): one table for
// order states, one for event types, one for what each state asks of the side whose turn it is.
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

/**
 * What an order in each state asks of the side whose turn it is ("Needs your action"). Each open
 * state is one side's turn (turnOf), so the state alone names the action; the side is checked so
 * a row never tells a party to do the other's step.
 */
const ACTIONS: Partial<Record<OrderStatus, { party: Party; words: string }>> = {
  awaiting_content: { party: 'buyer', words: 'Write the article' },
  awaiting_acceptance: { party: 'publisher', words: 'Accept or decline the order' },
  writing: { party: 'publisher', words: 'Write the draft' },
  draft_review: { party: 'buyer', words: 'Review the draft' },
  publishing: { party: 'publisher', words: 'Publish the article' },
  live_review: { party: 'buyer', words: 'Review the placement' },
  link_lost: { party: 'publisher', words: 'Restore the link' },
};

/** The action an event asks of `party`: a message asks for a reply; otherwise the state the event left the order in. */
export function actionWords(type: string, status: string | undefined, party: Party): string {
  if (type === 'order.message_received') return 'Read the message and reply';
  const action = ACTIONS[status as OrderStatus];
  return action && action.party === party ? action.words : 'Open the order';
}
