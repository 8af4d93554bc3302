import type { Db } from '../../db/handle.js';
import { isoSeconds } from '../../common/iso-seconds.js';
import { notFound } from '../errors.js';
import type { Viewer } from '../parties.js';
import type { OrderStatus } from './states.js';

/** The steps of an order's life, in the order they happen for the way it is written. */
export type TimelineStep = 'placed' | 'content' | 'accepted' | 'draft' | 'published' | 'checked' | 'paid';

export interface TimelineMark {
  step: TimelineStep;
  /** When it happened (ISO 8601 UTC to the second); null: not yet, or never for an order that ended. */
  at: string | null;
}

export interface OrderTimeline {
  status: OrderStatus;
  marks: TimelineMark[];
  /** Whether the last link check passed; null before any. */
  checkPassed: boolean | null;
  /** An order that ended without being paid (declined, cancelled, expired, refunded for a lost link): how and when. */
  ended: { status: OrderStatus; at: string } | null;
}

interface Row {
  status: OrderStatus;
  content_by: 'buyer' | 'publisher';
  created_at: Date;
  accepted_at: Date | null;
  published_at: Date | null;
  completed_at: Date | null;
  live_checked_at: Date | null;
  live_passed: boolean | null;
  updated_at: Date;
  first_content_at: Date | null;
  first_draft_at: Date | null;
}

const statement = (party: Viewer['party']) => ({
  name: `order_timeline_${party}`,
  text: `SELECT o.status, o.content_by, o.created_at, o.accepted_at, o.published_at, o.completed_at, o.live_checked_at, o.live_passed, o.updated_at,
                (SELECT min(c.submitted_at) FROM order_contents c WHERE c.order_id = o.id AND c.submitted_by = 'buyer') AS first_content_at,
                (SELECT min(c.submitted_at) FROM order_contents c WHERE c.order_id = o.id AND c.submitted_by = 'publisher') AS first_draft_at
           FROM orders o WHERE o.id = $1 AND ${party === 'buyer' ? 'o.workspace_id' : 'o.publisher_id'} = $2`,
});

/** States in which the approval paid the publisher (the order went through `completed`). */
const PAID: readonly OrderStatus[] = ['completed', 'link_lost', 'link_refunded'];
const ENDED_UNPAID: readonly OrderStatus[] = ['declined', 'cancelled', 'expired'];

/**
 * An order's timeline as its page draws it: placed, the article (the buyer's, or the publisher's
 * first draft), accepted, published, the last link check, paid; each with its time, or null while
 * it has not happened. Read from the order's own columns in one statement (the times are the
 * app's clock, as the events' are), for a party that may see the order; otherwise 404.
 */
export async function orderTimeline(q: Db, viewer: Viewer, orderId: number): Promise<OrderTimeline> {
  const { rows } = await q.query<Row>({ ...statement(viewer.party), values: [orderId, viewer.party === 'buyer' ? viewer.workspaceId : viewer.publisherId] });
  const r = rows[0];
  if (!r) throw notFound('Order');
  const at = (d: Date | null) => isoSeconds(d) ?? null;
  const article: TimelineMark[] =
    r.content_by === 'buyer'
      ? [
          { step: 'content', at: at(r.first_content_at) },
          { step: 'accepted', at: at(r.accepted_at) },
        ]
      : [
          { step: 'accepted', at: at(r.accepted_at) },
          { step: 'draft', at: at(r.first_draft_at) },
        ];
  const paid = PAID.includes(r.status) ? at(r.completed_at) : null;
  const ended =
    ENDED_UNPAID.includes(r.status) ? { status: r.status, at: at(r.completed_at ?? r.updated_at)! } : r.status === 'link_refunded' ? { status: r.status, at: at(r.updated_at)! } : null;
  return {
    status: r.status,
    marks: [{ step: 'placed', at: at(r.created_at) }, ...article, { step: 'published', at: at(r.published_at) }, { step: 'checked', at: at(r.live_checked_at) }, { step: 'paid', at: paid }],
    checkPassed: r.live_passed,
    ended,
  };
}
