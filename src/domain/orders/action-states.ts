import { conflict } from '../errors.js';
import type { OrderStatus } from './states.js';

/**
 * The states each action may start from (docs/orders.md's state table), in one place: the steps
 * refuse any other state (409 conflict), and the console offers an action's form only where it
 * may succeed.
 */
export const actionStates = {
  submitContent: ['awaiting_content'],
  approveDraft: ['draft_review'],
  approvePlacement: ['live_review'],
  cancel: ['awaiting_content', 'awaiting_acceptance'],
  accept: ['awaiting_acceptance'],
  decline: ['awaiting_acceptance'],
  submitDraft: ['writing', 'draft_review'],
  publish: ['publishing'],
  recheck: ['live_review', 'link_lost'],
} as const satisfies Record<string, readonly OrderStatus[]>;

export type OrderAction = keyof typeof actionStates;

export const allows = (action: OrderAction, status: OrderStatus): boolean => (actionStates[action] as readonly OrderStatus[]).includes(status);

/** Each action in the words of its refusal ("Cannot approve the placement: …"). */
const actionWords: Record<OrderAction, string> = {
  submitContent: 'submit content',
  approveDraft: 'approve the draft',
  approvePlacement: 'approve the placement',
  cancel: 'cancel',
  accept: 'accept',
  decline: 'decline',
  submitDraft: 'submit a draft',
  publish: 'publish',
  recheck: 're-check the placement',
};

/**
 * 409 naming the order's status unless `action` may start from it: the one refusal of a state
 * the steps, the MCP quote and the console's confirmation pages give.
 */
export function requireAllowed(action: OrderAction, status: OrderStatus): void {
  if (!allows(action, status)) throw conflict(`Cannot ${actionWords[action]}: the order is ${status.replace(/_/g, ' ')}.`, status);
}
