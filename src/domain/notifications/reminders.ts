import { orderStatuses, type OrderStatus } from '../../common/enums.js';
import { withTransaction, type Db } from '../../db/handle.js';
import type { MailSite } from '../mail/outbox.js';
import { turnOf } from '../orders/states.js';
import { dispatch, type Notice } from './dispatch.js';
import { deadlineWords, keyExpiryWords } from './notification-mails.js';

// The notifications that are not events (docs/mail.md): a deadline 24 hours away and a key
// expiring within 7 days are moments, not changes, so the deadline sweep derives them from the
// orders' deadlines and the keys' expiries. Each is recorded once per subject and moment (the
// order and its deadline, the key and its expiry: notification_reminders' unique key) in the
// transaction that queues its mails, and that row is the mails' subject in the outbox: a reminder
// goes once per person however many processes sweep, and a deadline set again later (a revised
// draft's) is reminded again.

export const DEADLINE_NOTICE_MS = 24 * 3_600_000;
export const KEY_EXPIRY_NOTICE_MS = 7 * 86_400_000;
/** Subjects handled per transaction. */
const BATCH = 100;

/** The states whose deadline is some side's to meet. */
const WITH_A_TURN = orderStatuses.filter((s) => turnOf[s] !== null);

interface Recorded {
  id: number;
  subject_id: number;
}

/** Records the reminders of these subjects at these moments; answers the ones this call recorded (another process's are skipped). */
async function record(tx: Db, kind: 'deadline_reminder' | 'key_expiring', subjects: Array<{ id: number; at: Date }>, now: number): Promise<Map<number, number>> {
  const { rows } = await tx.query<Recorded>({
    name: 'notification_reminders_record',
    text: `INSERT INTO notification_reminders (kind, subject_id, subject_at, created_at)
           SELECT $1, s.id, s.at, $3 FROM jsonb_to_recordset($2::jsonb) AS s(id bigint, at timestamptz)
           ON CONFLICT (kind, subject_id, subject_at) DO NOTHING
           RETURNING id, subject_id`,
    values: [kind, JSON.stringify(subjects.map((s) => ({ id: s.id, at: s.at.toISOString() }))), new Date(now)],
  });
  return new Map(rows.map((r) => [r.subject_id, r.id]));
}

interface DueOrder {
  id: number;
  status: OrderStatus;
  deadline_at: Date;
  workspace_id: number;
  publisher_id: number;
  outlet_name: string;
  outlet_domain: string;
  offer_title: string;
}

/**
 * Reminds the side whose turn it is of every deadline less than 24 hours away that was not
 * reminded yet. A state that lasts a day or less has no "24 hours before" to remind at: the
 * deadline is as near as it was when the order entered it. Answers how many reminders it recorded.
 */
export async function remindDeadlines(pool: Db, site: MailSite, now: number): Promise<number> {
  let recorded = 0;
  for (;;) {
    const n = await withTransaction(pool, async (tx) => {
      const { rows } = await tx.query<DueOrder>({
        name: 'deadline_reminders_due',
        // The open-state condition is the deadline index's own, so the index serves the range.
        text: `SELECT o.id, o.status, o.deadline_at, o.workspace_id, o.publisher_id, ol.name AS outlet_name, ol.domain AS outlet_domain, f.title AS offer_title
                 FROM orders o JOIN outlets ol ON ol.id = o.outlet_id JOIN offers f ON f.id = o.offer_id
                WHERE o.status NOT IN ('completed', 'declined', 'expired', 'cancelled') AND o.status = ANY($3::order_status[])
                  AND o.deadline_at > $1 AND o.deadline_at <= $2 AND o.deadline_at - o.state_entered_at > $4 * interval '1 millisecond'
                  AND NOT EXISTS (SELECT 1 FROM notification_reminders r WHERE r.kind = 'deadline_reminder' AND r.subject_id = o.id AND r.subject_at = o.deadline_at)
                ORDER BY o.deadline_at, o.id LIMIT ${BATCH}`,
        values: [new Date(now), new Date(now + DEADLINE_NOTICE_MS), WITH_A_TURN, DEADLINE_NOTICE_MS],
      });
      if (rows.length === 0) return { found: 0, recorded: 0 };
      const mine = await record(tx, 'deadline_reminder', rows.map((o) => ({ id: o.id, at: o.deadline_at })), now);
      const notices: Notice[] = rows.flatMap((o) => {
        const subjectId = mine.get(o.id);
        if (subjectId === undefined) return [];
        const side = turnOf[o.status] === 'buyer' ? ({ kind: 'workspace', id: o.workspace_id } as const) : ({ kind: 'publisher', id: o.publisher_id } as const);
        return [
          {
            kind: 'deadline_reminder' as const,
            subjectId,
            target: side,
            words: deadlineWords({ id: o.id, status: o.status, outlet: { name: o.outlet_name, domain: o.outlet_domain }, offer: { title: o.offer_title }, deadline: o.deadline_at }),
            order: { id: o.id, status: o.status },
          },
        ];
      });
      await dispatch(tx, site, notices, now);
      return { found: rows.length, recorded: mine.size };
    });
    recorded += n.recorded;
    if (n.found < BATCH) return recorded;
  }
}

interface ExpiringKey {
  id: number;
  name: string;
  prefix: string;
  expires_at: Date;
  workspace_id: number | null;
  publisher_id: number | null;
  can_place_orders: boolean;
}

/**
 * Tells the people who can roll it of every key expiring within 7 days, once per expiry. Left out:
 * a key made to last 7 days or less (its maker chose that), a key already rolled (its successor
 * carries on: the old one's grace is the roll's), and a connected app's grant (Connected apps).
 */
export async function remindExpiringKeys(pool: Db, site: MailSite, now: number): Promise<number> {
  let recorded = 0;
  for (;;) {
    const n = await withTransaction(pool, async (tx) => {
      const { rows } = await tx.query<ExpiringKey>({
        name: 'key_expiry_reminders_due',
        text: `SELECT k.id, k.name, k.prefix, k.expires_at, k.workspace_id, k.publisher_id, k.can_place_orders
                 FROM api_keys k
                WHERE k.expires_at IS NOT NULL AND k.revoked_at IS NULL AND k.expires_at > $1 AND k.expires_at <= $2
                  AND k.oauth_grant_id IS NULL AND k.expires_at - k.created_at > $3 * interval '1 millisecond'
                  AND NOT EXISTS (SELECT 1 FROM api_keys n WHERE n.budget_key_id = COALESCE(k.budget_key_id, k.id) AND n.id > k.id)
                  AND NOT EXISTS (SELECT 1 FROM notification_reminders r WHERE r.kind = 'key_expiring' AND r.subject_id = k.id AND r.subject_at = k.expires_at)
                ORDER BY k.expires_at, k.id LIMIT ${BATCH}`,
        values: [new Date(now), new Date(now + KEY_EXPIRY_NOTICE_MS), KEY_EXPIRY_NOTICE_MS],
      });
      if (rows.length === 0) return { found: 0, recorded: 0 };
      const mine = await record(tx, 'key_expiring', rows.map((k) => ({ id: k.id, at: k.expires_at })), now);
      const notices: Notice[] = rows.flatMap((k) => {
        const subjectId = mine.get(k.id);
        if (subjectId === undefined) return [];
        const target = k.workspace_id !== null ? ({ kind: 'workspace', id: k.workspace_id } as const) : ({ kind: 'publisher', id: k.publisher_id! } as const);
        return [
          {
            kind: 'key_expiring' as const,
            subjectId,
            target,
            words: keyExpiryWords(k),
            // A spending key is an owner's to roll.
            ...(k.can_place_orders ? { permission: 'manage_spending_keys' as const } : {}),
          },
        ];
      });
      await dispatch(tx, site, notices, now);
      return { found: rows.length, recorded: mine.size };
    });
    recorded += n.recorded;
    if (n.found < BATCH) return recorded;
  }
}

/** Deletes reminder records past the retention (their moments long gone), a batch at a time. */
export async function purgeOldReminders(db: Db, now: number, retentionDays: number): Promise<number> {
  const { rowCount } = await db.query({
    name: 'notification_reminders_purge',
    text: `DELETE FROM notification_reminders WHERE id IN (SELECT id FROM notification_reminders WHERE created_at < $1 AND subject_at < $1 LIMIT 1000)`,
    values: [new Date(now - retentionDays * 86_400_000)],
  });
  return rowCount ?? 0;
}
