import type { MemberRole } from '../../common/enums.js';
import { withTransaction, type Db } from '../../db/handle.js';
import { composeMail } from '../mail/compose.js';
import { enqueueMail, type MailSite } from '../mail/outbox.js';
import { type NotificationKind, modeOf } from './kinds.js';
import { unsubscribeSecret, unsubscribeToken, unsubscribeUrl } from './unsubscribe-token.js';

// The daily digest (docs/mail.md): the notifications a person set to "Daily digest", gathered in
// one mail a day at NOTIFICATION_DIGEST_HOUR (UTC), whatever workspace or publisher they came
// from. The digest of a day holds what came before that hour and was not in an earlier digest.
// One per person and day: the outbox's subject is the day, its address the person's, so several
// processes sweeping queue it once.

const DAY = 86_400_000;
/** People whose digest is written per sweep, each in a transaction of their own. */
const BATCH = 100;

/** The last digest moment at or before `now`: today's hour if it has come, else yesterday's. */
export function digestCutoff(now: number, hourUtc: number): number {
  const today = Math.floor(now / DAY) * DAY + hourUtc * 3_600_000;
  return today <= now ? today : today - DAY;
}

interface Item {
  id: number;
  kind: NotificationKind;
  line: string;
  url: string;
  role: MemberRole | null;
  notifications: Record<string, unknown> | null;
  /** False when the order this line is about has left the state it needed the person in. */
  current: boolean;
}

/**
 * Writes the digest of everyone with lines older than the last digest moment. A line whose kind
 * the person has since set to something else, whose membership is gone, or whose order has moved
 * on is left out. Answers how many digests it queued.
 */
export async function sendDigests(pool: Db, site: MailSite, now: number, hourUtc: number): Promise<number> {
  const cutoff = digestCutoff(now, hourUtc);
  let sent = 0;
  for (;;) {
    const { rows: people } = await pool.query<{ user_id: number }>({
      name: 'notification_digest_people',
      text: `SELECT DISTINCT user_id FROM notification_digest_items WHERE created_at < $1 LIMIT ${BATCH}`,
      values: [new Date(cutoff)],
    });
    let handled = 0;
    for (const { user_id } of people) {
      const outcome = await digestOf(pool, site, user_id, cutoff, now);
      if (outcome === 'sent') sent++;
      if (outcome !== 'skipped') handled++;
    }
    // A full batch another process holds (it is writing those digests) ends this sweep's turn.
    if (people.length < BATCH || handled === 0) return sent;
  }
}

/** `sent`: the digest is queued; `handled`: the lines were settled without one (nothing left to tell, or deferred); `skipped`: another process holds them. */
async function digestOf(pool: Db, site: MailSite, userId: number, cutoff: number, now: number): Promise<'sent' | 'handled' | 'skipped'> {
  return withTransaction(pool, async (tx) => {
    // Another process writing this person's digest holds their lines: skipped here.
    const { rows } = await tx.query<Item>({
      name: 'notification_digest_lines',
      text: `SELECT i.id, i.kind, i.line, i.url, m.role, m.notifications,
                    (i.order_id IS NULL OR o.status::text IS NOT DISTINCT FROM i.order_status) AS current
               FROM notification_digest_items i
               LEFT JOIN memberships m ON m.user_id = i.user_id AND (m.workspace_id = i.workspace_id OR m.publisher_id = i.publisher_id)
               LEFT JOIN orders o ON o.id = i.order_id
              WHERE i.user_id = $1 AND i.created_at < $2
              ORDER BY i.id
              FOR UPDATE OF i SKIP LOCKED`,
      values: [userId, new Date(cutoff)],
    });
    if (rows.length === 0) return 'skipped';
    const ids = rows.map((r) => r.id);
    const keep = rows.filter((r) => r.role !== null && r.current && modeOf(r.notifications, r.kind, r.role) === 'digest');
    const { rows: users } = await tx.query<{ email: string; name: string }>({
      name: 'notification_digest_user',
      text: 'SELECT email, name FROM users WHERE id = $1 AND email_verified_at IS NOT NULL',
      values: [userId],
    });
    const user = users[0];
    let queued = false;
    if (keep.length && user) {
      const unsubscribe = unsubscribeUrl(site.baseUrl, unsubscribeToken(await unsubscribeSecret(tx), { userId, target: null, kind: 'digest' }));
      const mail = composeMail({
        subject: `Your daily digest: ${keep.length} thing${keep.length === 1 ? '' : 's'} that needed you`,
        greeting: `Hello ${user.name},`,
        paragraphs: ['Since your last digest, these needed you (each one that has been dealt with since is left out):'],
        items: keep.map((r) => ({ text: r.line, url: r.url })),
        footer: {
          text: 'You get this digest because some of your notifications are set to Daily digest. Change them in the settings of each workspace or publisher account.',
          links: [{ label: 'Unsubscribe from the daily digest (turns every kind set to it off)', url: unsubscribe }],
        },
      });
      queued = await enqueueMail(tx, site, { kind: 'digest', subjectId: Math.floor(cutoff / DAY), userId, to: user.email, listUnsubscribe: unsubscribe, ...mail }, now);
      if (!queued) {
        // Today's digest went already (these lines committed just after it was written): they wait for tomorrow's.
        await tx.query({ name: 'notification_digest_defer', text: 'UPDATE notification_digest_items SET created_at = $2 WHERE id = ANY($1::bigint[])', values: [ids, new Date(cutoff)] });
        return 'handled';
      }
    }
    await tx.query({ name: 'notification_digest_done', text: 'DELETE FROM notification_digest_items WHERE id = ANY($1::bigint[])', values: [ids] });
    return queued ? 'sent' : 'handled';
  });
}
