import type { MemberRole } from '../../common/enums.js';
import type { Db } from '../../db/handle.js';
import { composeMail } from '../mail/compose.js';
import { enqueueMails, type MailSite, type NewMail } from '../mail/outbox.js';
import type { Permission } from '../users/permissions.js';
import { kindInfo, modeLabels, modeOf, type NotificationKind, rolesFor, type TargetKind } from './kinds.js';
import type { NoticeWords } from './notification-mails.js';
import { unsubscribeSecret, unsubscribeToken, unsubscribeUrl } from './unsubscribe-token.js';

/** Something that needs the people of a workspace or publisher: an event's, or a reminder's. */
export interface Notice {
  kind: NotificationKind;
  /** The outbox's subject: the event's feed position, or the reminder's row. */
  subjectId: number;
  target: { kind: TargetKind; id: number };
  words: NoticeWords;
  /** Narrower than the kind's own permission (a spending key's expiry: only owners can roll it). */
  permission?: Permission;
  /** An order's notice, for the digest: dropped if the order has left this state by then. */
  order?: { id: number; status: string };
}

interface Member {
  user_id: number;
  email: string;
  name: string;
  role: MemberRole;
  notifications: Record<string, unknown>;
  workspace_id: number | null;
  publisher_id: number | null;
  target_name: string;
}

export const targetPath = (t: { kind: TargetKind; id: number }) => `/app/${t.kind === 'workspace' ? 'w' : 'p'}/${t.id}`;
export const sideLabel = (t: TargetKind) => (t === 'workspace' ? 'workspace' : 'publisher account');

/**
 * Turns notices into what each person asked for (docs/mail.md): a mail now (the outbox, one per
 * kind, subject and address), a line in their next daily digest, or nothing. Only members with a
 * confirmed address, and only the roles that can act on the kind, are told. In the caller's
 * transaction, which also moves its cursor or records its reminders: the notices are queued if
 * and only if that commits.
 */
export async function dispatch(tx: Db, site: MailSite, notices: Notice[], now: number): Promise<{ mails: number; digested: number }> {
  if (notices.length === 0) return { mails: 0, digested: 0 };
  const ids = (side: TargetKind) => [...new Set(notices.filter((n) => n.target.kind === side).map((n) => n.target.id))];
  const { rows: members } = await tx.query<Member>({
    name: 'notification_recipients',
    text: `SELECT m.user_id, u.email, u.name, m.role, m.notifications, m.workspace_id, m.publisher_id, COALESCE(w.name, p.name) AS target_name
             FROM memberships m JOIN users u ON u.id = m.user_id
             LEFT JOIN workspaces w ON w.id = m.workspace_id
             LEFT JOIN publishers p ON p.id = m.publisher_id
            WHERE (m.workspace_id = ANY($1::int[]) OR m.publisher_id = ANY($2::int[])) AND u.email_verified_at IS NOT NULL`,
    values: [ids('workspace'), ids('publisher')],
  });
  const secret = await unsubscribeSecret(tx);
  const mails: NewMail[] = [];
  const items: unknown[] = [];
  const seen = new Set<string>();
  for (const notice of notices) {
    const info = kindInfo[notice.kind];
    const roles = rolesFor(notice.permission ?? info.permission);
    const column = notice.target.kind === 'workspace' ? 'workspace_id' : 'publisher_id';
    const base = `${site.baseUrl}${targetPath(notice.target)}`;
    for (const m of members) {
      if (m[column] !== notice.target.id || !roles.includes(m.role)) continue;
      const once = `${notice.kind}:${notice.subjectId}:${m.user_id}`;
      if (seen.has(once)) continue;
      seen.add(once);
      const mode = modeOf(m.notifications, notice.kind, m.role);
      if (mode === 'off') continue;
      const url = `${base}${notice.words.action.path}`;
      if (mode === 'digest') {
        items.push({
          user_id: m.user_id,
          workspace_id: m.workspace_id,
          publisher_id: m.publisher_id,
          kind: notice.kind,
          subject_id: notice.subjectId,
          order_id: notice.order?.id ?? null,
          order_status: notice.order?.status ?? null,
          line: `${m.target_name}: ${notice.words.line}`,
          url,
        });
        continue;
      }
      const unsubscribe = unsubscribeUrl(site.baseUrl, unsubscribeToken(secret, { userId: m.user_id, target: notice.target, kind: notice.kind }));
      const mail = composeMail({
        subject: notice.words.subject,
        greeting: `Hello ${m.name},`,
        paragraphs: notice.words.paragraphs,
        action: { label: notice.words.action.label, url },
        footer: {
          text: `You get this mail as ${m.role} of the ${sideLabel(notice.target.kind)} ${m.target_name}, where "${info.label}" is set to ${modeLabels.now}.`,
          links: [
            { label: 'Notification settings', url: `${base}/settings/notifications` },
            { label: `Unsubscribe from "${info.label}"`, url: unsubscribe },
          ],
        },
      });
      mails.push({ kind: notice.kind, subjectId: notice.subjectId, userId: m.user_id, to: m.email, listUnsubscribe: unsubscribe, ...mail });
    }
  }
  const queued = await enqueueMails(tx, site, mails, now);
  let digested = 0;
  if (items.length) {
    const { rowCount } = await tx.query({
      name: 'notification_digest_add',
      text: `INSERT INTO notification_digest_items (user_id, workspace_id, publisher_id, kind, subject_id, order_id, order_status, line, url, created_at)
             SELECT i.user_id, i.workspace_id, i.publisher_id, i.kind, i.subject_id, i.order_id, i.order_status, i.line, i.url, $2
               FROM jsonb_to_recordset($1::jsonb) AS i(user_id int, workspace_id int, publisher_id int, kind text, subject_id bigint, order_id bigint, order_status text, line text, url text)
             ON CONFLICT (kind, subject_id, user_id) DO NOTHING`,
      values: [JSON.stringify(items), new Date(now)],
    });
    digested = rowCount ?? 0;
  }
  return { mails: queued, digested };
}
