import type { Config } from '../../config.js';
import { orderStatuses, type OrderStatus } from '../../common/enums.js';
import type { Party } from '../parties.js';

export { orderStatuses, type OrderStatus, type Party };

export type DeadlineKind = 'respond_by' | 'deliver_by' | 'review_by' | 'restore_by';

/** Whose move it is in each state (docs/orders.md). */
export const turnOf: Record<OrderStatus, Party | null> = {
  awaiting_content: 'buyer',
  awaiting_acceptance: 'publisher',
  writing: 'publisher',
  draft_review: 'buyer',
  publishing: 'publisher',
  live_review: 'buyer',
  completed: null,
  link_lost: 'publisher',
  declined: null,
  expired: null,
  cancelled: null,
  link_refunded: null,
};

/** Which deadline the single stored `deadline_at` is, in each state. */
export const deadlineKindOf: Record<OrderStatus, DeadlineKind | null> = {
  awaiting_content: 'review_by',
  awaiting_acceptance: 'respond_by',
  writing: 'deliver_by',
  draft_review: 'review_by',
  publishing: 'deliver_by',
  live_review: 'review_by',
  completed: null,
  link_lost: 'restore_by',
  declined: null,
  expired: null,
  cancelled: null,
  link_refunded: null,
};

export interface Durations {
  respondMs: number;
  contentMs: number;
  draftReviewMs: number;
  liveReviewMs: number;
  publishAfterDraftMs: number;
  /** From completion until the payout becomes payable (LINK_GUARANTEE_DAYS). */
  guaranteeMs: number;
  /** A lost link's time to come back (LINK_RESTORE_DAYS). */
  restoreMs: number;
  /** Between two checks of one placement in its guarantee window (LINK_RECHECK_INTERVAL_MS). */
  recheckMs: number;
  /** How long an approval request waits for a person (APPROVAL_REQUEST_HOURS). */
  approvalMs: number;
}

const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

export function durationsFrom(config: Config): Durations {
  return {
    respondMs: config.ORDER_RESPOND_HOURS * HOUR,
    contentMs: config.ORDER_CONTENT_DAYS * DAY,
    draftReviewMs: config.ORDER_DRAFT_REVIEW_DAYS * DAY,
    liveReviewMs: config.ORDER_LIVE_REVIEW_DAYS * DAY,
    publishAfterDraftMs: config.ORDER_PUBLISH_AFTER_DRAFT_DAYS * DAY,
    guaranteeMs: config.LINK_GUARANTEE_DAYS * DAY,
    restoreMs: config.LINK_RESTORE_DAYS * DAY,
    recheckMs: config.LINK_RECHECK_INTERVAL_MS,
    approvalMs: config.APPROVAL_REQUEST_HOURS * HOUR,
  };
}

/**
 * The deadline of a state, counted from the moment the order enters it. `publishing` gets the
 * offer's turnaround for the buyer's own content, and a shorter fixed time for an approved draft.
 */
export function deadlineFor(
  status: OrderStatus,
  enteredAt: number,
  d: Durations,
  order: { turnaroundDays: number; publishingBuyerContent?: boolean },
): Date | null {
  const ms: Record<OrderStatus, number | null> = {
    awaiting_content: d.contentMs,
    awaiting_acceptance: d.respondMs,
    writing: order.turnaroundDays * DAY,
    draft_review: d.draftReviewMs,
    publishing: order.publishingBuyerContent ? order.turnaroundDays * DAY : d.publishAfterDraftMs,
    live_review: d.liveReviewMs,
    completed: null,
    link_lost: d.restoreMs,
    declined: null,
    expired: null,
    cancelled: null,
    link_refunded: null,
  };
  const span = ms[status];
  return span === null ? null : new Date(enteredAt + span);
}

export type InitialStatus = 'awaiting_content' | 'awaiting_acceptance';

/** A new order waits for the buyer's content unless it came with the order or the publisher writes it. */
export function initialStatus(contentBy: 'buyer' | 'publisher', withContent: boolean): InitialStatus {
  return withContent || contentBy === 'publisher' ? 'awaiting_acceptance' : 'awaiting_content';
}

/** A new order's deadline: neither initial state's depends on the offer (its turnaround starts on acceptance). */
export function initialDeadline(status: InitialStatus, placedAt: number, d: Durations): Date {
  return deadlineFor(status, placedAt, d, { turnaroundDays: 0 })!;
}
