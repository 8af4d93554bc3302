import { withTransaction, type Db } from '../../db/handle.js';
import type { EventType } from '../events/event-types.js';
import type { MailSite } from '../mail/outbox.js';
import { dispatch, type Notice } from './dispatch.js';
import { approvalWords, budgetWords, fundsWords, type OrderFacts, orderWords, payoutWords, webhookWords } from './notification-mails.js';

// Notifications from the event feed (docs/mail.md): the feed is the one record of what happened,
// so the mails are read from it, as webhook deliveries are, never written beside the change (the
// placing transaction does no more work). A cursor over positioned events, like a feed follower's
// `after`: positions become visible only in increasing order (the sequencer hands them out after
// commit, one run at a time), so reading `position > cursor` skips none; the cursor moves in the
// transaction that queues the mails, so a crash queues nothing and moves nothing; and one process
// at a time holds it (the row's lock, SKIP LOCKED: another process skips its turn). Were it ever
// read twice, the outbox's unique key (kind, event, address) would still queue one mail.

const CURSOR = 'notifications';
/** Events read at once; a run loops while it reads full batches. */
const BATCH = 500;

/** The events that can need someone, and whose side each is for. */
const SOURCES: readonly EventType[] = [
  'order.placed',
  'order.content_submitted',
  'order.draft_submitted',
  'order.published',
  'order.link_lost',
  'approval_request.created',
  'key.budget_exhausted',
  'webhook_endpoint.disabled',
  'balance.topped_up',
  'payout.requested',
  'payout.sent',
  'payout.failed',
];

interface EventRow {
  position: number;
  type: EventType;
  workspace_id: number | null;
  publisher_id: number | null;
  order_id: number | null;
  data: Record<string, unknown>;
  /** Whether what the event asked for is still to do: the order still in the state it left it in, the request still pending. */
  still: boolean | null;
  by_app: boolean | null;
}

/**
 * Makes the cursor, at the newest positioned event, if there is none yet: a first start (or the
 * upgrade that brings notifications) mails nothing about what happened before it. Every process
 * calls it when it starts; the first one's row stands.
 */
export async function startNotificationCursor(db: Db, now: number): Promise<void> {
  await db.query({
    name: 'event_cursor_start',
    text: `INSERT INTO event_cursors (name, position, updated_at) SELECT $1, COALESCE(max(position), 0), $2 FROM events ON CONFLICT (name) DO NOTHING`,
    values: [CURSOR, new Date(now)],
  });
}

/** The order as the event's party saw it, trimmed to what the words use (its deadline: the one that applies in its state). */
function orderFacts(orderId: number, data: Record<string, unknown>): OrderFacts {
  const deadlines = (data.deadlines ?? {}) as Record<string, string | null>;
  return {
    id: orderId,
    outlet: data.outlet as OrderFacts['outlet'],
    offer: data.offer as OrderFacts['offer'],
    money: (data.money as string | null) ?? null,
    live_url: (data.live_url as string | null) ?? null,
    deadline: Object.values(deadlines).find((d) => d) ?? null,
  };
}

/** The notice an event makes for its side, if it needs that side's people. */
function noticeOf(e: EventRow): Notice | null {
  if (e.still !== true) return null;
  const target = e.workspace_id !== null ? { kind: 'workspace' as const, id: e.workspace_id } : { kind: 'publisher' as const, id: e.publisher_id! };
  const publisher = target.kind === 'publisher';
  const order = (kind: Parameters<typeof orderWords>[0]): Notice => ({
    kind,
    subjectId: e.position,
    target,
    words: orderWords(kind, orderFacts(e.order_id!, e.data)),
    order: { id: e.order_id!, status: String(e.data.status) },
  });
  switch (e.type) {
    // A placement waiting for the buyer's article is the buyer's turn: the publisher hears when it comes.
    case 'order.placed':
      return publisher && e.data.status === 'awaiting_acceptance' ? order('order_to_accept') : null;
    case 'order.content_submitted':
      return publisher ? order('content_in') : null;
    case 'order.draft_submitted':
      return publisher ? null : order('draft_ready');
    case 'order.published':
      return publisher ? null : order('placement_live');
    case 'order.link_lost':
      return publisher ? order('link_lost') : null;
    case 'approval_request.created':
      return { kind: 'approval_request', subjectId: e.position, target, words: approvalWords(e.data as Parameters<typeof approvalWords>[0]) };
    case 'key.budget_exhausted':
      return { kind: 'budget_exhausted', subjectId: e.position, target, words: budgetWords({ ...(e.data as object), byApp: e.by_app === true }) };
    case 'webhook_endpoint.disabled':
      return { kind: 'webhook_disabled', subjectId: e.position, target, words: webhookWords(e.data as { id?: number; url?: string }) };
    case 'balance.topped_up':
      return { kind: 'funds_added', subjectId: e.position, target, words: fundsWords(e.data as Parameters<typeof fundsWords>[0]) };
    case 'payout.requested':
    case 'payout.sent':
    case 'payout.failed':
      return { kind: e.type.replace('.', '_') as 'payout_requested' | 'payout_sent' | 'payout_failed', subjectId: e.position, target, words: payoutWords(e.type, e.data as Parameters<typeof payoutWords>[1]) };
    default:
      return null;
  }
}

export interface FromEventsResult {
  /** Events read past (of any type). */
  events: number;
  mails: number;
  digested: number;
}

/**
 * Reads the events positioned since the cursor, queues the notifications they make, and moves the
 * cursor past them, a batch per transaction, until none is left. A process that finds the cursor
 * held by another does nothing: that one is reading the same events.
 */
export async function notifyFromEvents(pool: Db, site: MailSite, now: number): Promise<FromEventsResult> {
  const total: FromEventsResult = { events: 0, mails: 0, digested: 0 };
  for (;;) {
    const run = await withTransaction(pool, async (tx) => {
      const cursor = await tx.query<{ position: number }>({
        name: 'event_cursor_hold',
        text: 'SELECT position FROM event_cursors WHERE name = $1 FOR UPDATE SKIP LOCKED',
        values: [CURSOR],
      });
      if (!cursor.rows[0]) return null;
      const after = Number(cursor.rows[0].position);
      const batch = await tx.query<{ last: number | null; n: number }>({
        name: 'notification_events_batch',
        text: `SELECT max(position) AS last, count(*)::int AS n FROM (SELECT position FROM events WHERE position > $1 ORDER BY position LIMIT ${BATCH}) s`,
        values: [after],
      });
      const { last, n } = batch.rows[0]!;
      if (last === null) return { events: 0, mails: 0, digested: 0 };
      const { rows } = await tx.query<EventRow>({
        name: 'notification_events',
        // Only what the words use is read of an order's data: a draft's event carries its article.
        text: `SELECT e.position, e.type, e.workspace_id, e.publisher_id, e.order_id,
                      CASE WHEN e.order_id IS NOT NULL
                           THEN jsonb_build_object('status', e.data->'status', 'outlet', e.data->'outlet', 'offer', e.data->'offer', 'deadlines', e.data->'deadlines',
                                                   'money', COALESCE(e.data->'price_formatted', e.data->'payout_formatted'), 'live_url', e.data->'live_url')
                           ELSE e.data END AS data,
                      CASE WHEN e.order_id IS NOT NULL THEN o.status::text = e.data->>'status'
                           WHEN e.type = 'approval_request.created' THEN a.status = 'pending'
                           ELSE true END AS still,
                      k.oauth_grant_id IS NOT NULL AS by_app
                 FROM events e
                 LEFT JOIN orders o ON o.id = e.order_id
                 LEFT JOIN approval_requests a ON e.type = 'approval_request.created' AND a.id = (e.data->>'id')::bigint
                 LEFT JOIN api_keys k ON e.type = 'key.budget_exhausted' AND k.id = (e.data->'key'->>'id')::int
                WHERE e.position > $1 AND e.position <= $2 AND e.type = ANY($3::text[])
                ORDER BY e.position`,
        values: [after, last, SOURCES],
      });
      const notices = rows.map((r) => noticeOf({ ...r, position: Number(r.position) })).filter((x): x is Notice => x !== null);
      const done = await dispatch(tx, site, notices, now);
      await tx.query({ name: 'event_cursor_move', text: 'UPDATE event_cursors SET position = $2, updated_at = $3 WHERE name = $1', values: [CURSOR, last, new Date(now)] });
      return { events: n, ...done };
    });
    if (run === null) return total;
    total.events += run.events;
    total.mails += run.mails;
    total.digested += run.digested;
    if (run.events < BATCH) return total;
  }
}
