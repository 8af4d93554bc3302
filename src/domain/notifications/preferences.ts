import type { MemberRole } from '../../common/enums.js';
import { withTransaction, type Db } from '../../db/handle.js';
import { DomainError, type FieldErrors, invalidInput, notFound } from '../errors.js';
import {
  defaultMode,
  kindInfo,
  kindsFor,
  modeOf,
  notificationModes,
  type NotificationKind,
  type NotificationMode,
  type TargetKind,
} from './kinds.js';
import { readUnsubscribeToken, unsubscribeSecret, type Unsubscribe } from './unsubscribe-token.js';

// A person's notification settings (docs/mail.md, "Preferences"): per membership, since what
// needs a person, and their role's defaults, depend on the workspace or publisher account. Only
// the settings that differ from the role's default are stored (memberships.notifications), so a
// kind left alone follows the role when it changes.

export interface Target {
  kind: TargetKind;
  id: number;
}

export interface NotificationSetting {
  kind: NotificationKind;
  label: string;
  help: string;
  mode: NotificationMode;
  defaultMode: NotificationMode;
}

const column = (t: Target) => (t.kind === 'workspace' ? 'workspace_id' : 'publisher_id');

async function membership(q: Db, userId: number, target: Target, lock: boolean) {
  const { rows } = await q.query<{ role: MemberRole; notifications: Record<string, unknown> }>({
    name: `notification_settings_${target.kind}${lock ? '_lock' : ''}`,
    text: `SELECT role, notifications FROM memberships WHERE user_id = $1 AND ${column(target)} = $2${lock ? ' FOR UPDATE' : ''}`,
    values: [userId, target.id],
  });
  // Someone who is not a member is told it is not found, as for another tenant's page.
  if (!rows[0]) throw notFound(target.kind === 'workspace' ? 'Workspace' : 'Publisher');
  return rows[0];
}

const settingsOf = (target: Target, role: MemberRole, stored: Record<string, unknown>): NotificationSetting[] =>
  kindsFor(target.kind, role).map((kind) => ({ kind, label: kindInfo[kind].label, help: kindInfo[kind].help, mode: modeOf(stored, kind, role), defaultMode: defaultMode(role) }));

/** The person's setting for every kind they can receive in this workspace or publisher account. */
export async function notificationSettings(db: Db, userId: number, target: Target): Promise<NotificationSetting[]> {
  const m = await membership(db, userId, target, false);
  return settingsOf(target, m.role, m.notifications);
}

/**
 * Changes the person's settings: `changes` maps kinds to `now`, `digest` or `off`. A kind they
 * cannot receive here (an approval request, for a member) or a mode that is none of these is
 * refused, naming the field, and nothing changes.
 */
export async function setNotificationSettings(db: Db, userId: number, target: Target, changes: Record<string, string>): Promise<NotificationSetting[]> {
  return withTransaction(db, async (tx) => {
    const m = await membership(tx, userId, target, true);
    const offered = kindsFor(target.kind, m.role) as string[];
    const errors: FieldErrors = {};
    for (const [kind, mode] of Object.entries(changes)) {
      if (!offered.includes(kind)) errors[kind] = ['is not a notification your role receives here'];
      else if (!(notificationModes as readonly string[]).includes(mode)) errors[kind] = [`must be one of ${notificationModes.join(', ')}`];
    }
    if (Object.keys(errors).length) throw invalidInput(errors);
    const next: Record<string, unknown> = { ...m.notifications };
    for (const [kind, mode] of Object.entries(changes)) {
      if (mode === defaultMode(m.role)) delete next[kind];
      else next[kind] = mode;
    }
    await tx.query({
      name: `notification_settings_set_${target.kind}`,
      text: `UPDATE memberships SET notifications = $3::jsonb WHERE user_id = $1 AND ${column(target)} = $2`,
      values: [userId, target.id, JSON.stringify(next)],
    });
    return settingsOf(target, m.role, next);
  });
}

/** What an unsubscribe link stops, in words: for its page, and its answer. */
export interface UnsubscribeSubject {
  /** "A new order to accept", or the daily digest. */
  what: string;
  /** "the publisher account Acme"; null for the digest, which gathers every membership's. */
  where: string | null;
}

const badLink = () =>
  new DomainError('not_found', 'This unsubscribe link is not valid: it may have been cut short. Change your notifications in the console, under Settings → Notifications.');

async function read(db: Db, token: string): Promise<{ u: Unsubscribe; subject: UnsubscribeSubject }> {
  const u = readUnsubscribeToken(await unsubscribeSecret(db), token);
  if (!u) throw badLink();
  if (u.target === null) return { u, subject: { what: 'the daily digest', where: null } };
  const table = u.target.kind === 'workspace' ? 'workspaces' : 'publishers';
  const { rows } = await db.query<{ name: string }>({ name: `unsubscribe_target_${table}`, text: `SELECT name FROM ${table} WHERE id = $1`, values: [u.target.id] });
  const where = `the ${u.target.kind === 'workspace' ? 'workspace' : 'publisher account'} ${rows[0]?.name ?? `number ${u.target.id}`}`;
  return { u, subject: { what: `"${kindInfo[u.kind].label}"`, where } };
}

/** What a link would turn off (its page, opened without acting: mail scanners open links). A link this service did not sign is 404. */
export async function describeUnsubscribe(db: Db, token: string): Promise<UnsubscribeSubject> {
  return (await read(db, token)).subject;
}

/**
 * One-click unsubscribe (RFC 8058), no sign-in: the link's kind set to Off in its membership, or,
 * for the digest's link, every kind the person set to the daily digest set to Off everywhere.
 * Using it again, or after the membership ended, changes nothing and answers the same.
 */
export async function unsubscribe(db: Db, token: string): Promise<UnsubscribeSubject> {
  const { u, subject } = await read(db, token);
  if (u.target === null) {
    await db.query({
      name: 'unsubscribe_digest',
      text: `UPDATE memberships
                SET notifications = (SELECT jsonb_object_agg(key, CASE WHEN value = '"digest"'::jsonb THEN '"off"'::jsonb ELSE value END) FROM jsonb_each(notifications))
              WHERE user_id = $1 AND EXISTS (SELECT 1 FROM jsonb_each_text(notifications) WHERE value = 'digest')`,
      values: [u.userId],
    });
  } else {
    const off: NotificationMode = 'off';
    await db.query({
      name: `unsubscribe_kind_${u.target.kind}`,
      text: `UPDATE memberships SET notifications = notifications || jsonb_build_object($3::text, $4::text) WHERE user_id = $1 AND ${column(u.target)} = $2`,
      values: [u.userId, u.target.id, u.kind, off],
    });
  }
  return subject;
}
