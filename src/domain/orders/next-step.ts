import type { OrderStatus } from './states.js';

// What an open order asks of the side whose turn it is (turnOf in states.ts), in one table: the
// console's "Needs your action" shows `title`; the deadline reminder mail says "`ask` by <time>.
// After that, `after`." Kept together so a state's step is named once for both.

export interface NextStep {
  /** A button-like imperative: "Write the article". */
  title: string;
  /** The same step inside a sentence: "send the article". */
  ask: string;
  /** What the deadline does if nobody acts: "the order expires and you are refunded". */
  after: string;
}

type OpenStatus = Exclude<OrderStatus, 'completed' | 'declined' | 'expired' | 'cancelled' | 'link_refunded'>;

export const NEXT_STEP: Record<OpenStatus, NextStep> = {
  awaiting_content: { title: 'Write the article', ask: 'send the article', after: 'the order expires and you are refunded' },
  awaiting_acceptance: { title: 'Accept or decline the order', ask: 'accept or decline the order', after: 'it expires' },
  writing: { title: 'Write the draft', ask: 'submit the draft', after: 'the order expires' },
  draft_review: { title: 'Review the draft', ask: 'approve the draft or ask for changes', after: 'it is approved automatically' },
  publishing: { title: 'Publish the article', ask: 'publish the placement and report its address', after: 'the order expires' },
  live_review: { title: 'Review the placement', ask: 'review and approve the placement', after: 'it is approved automatically if its link check passed' },
  link_lost: { title: 'Restore the link', ask: 'put the link back', after: 'the buyer is refunded' },
};

/** The next step of an order in `status`, or undefined when the order is closed. */
export const nextStepOf = (status: string): NextStep | undefined => NEXT_STEP[status as OpenStatus];
