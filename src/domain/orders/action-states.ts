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

/** The states `action` may start from, as `requireStatus` takes them. */
export const statesFor = (action: OrderAction): OrderStatus[] => [...actionStates[action]];

export const allows = (action: OrderAction, status: OrderStatus): boolean => (actionStates[action] as readonly OrderStatus[]).includes(status);
