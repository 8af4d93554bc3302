import { createHash, randomBytes } from 'node:crypto';
import type { MemberRole } from '../../common/enums.js';
import { type Db, withTransaction } from '../../db/handle.js';
import { systemClock, type Clock } from '../clock.js';
import { DomainError, forbidden, notFound } from '../errors.js';
import { alreadyMember, insertMembership, requireTarget, roleIn, targetColumn, type Target } from './memberships.js';
import { can } from './permissions.js';
import { createUser, type User } from './user-service.js';
import { emailField, parseUserInput, roleField } from './user-input.js';
import { z } from 'zod';

export const INVITATION_DAYS = 7;
const DAY_MS = 86_400_000;

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

const invitationInput = z.object({ email: emailField, role: roleField });

export interface CreatedInvitation {
  id: number;
  /** The raw token, for the invite link: returned here only, never stored. */
  token: string;
  email: string;
  role: MemberRole;
  expiresAt: Date;
}

/** An owner invites an email with a role. The link's token is returned once; only its hash is kept. */
export async function createInvitation(
  db: Db,
  actorId: number,
  target: Target,
  email: string,
  role: MemberRole,
  clock: Clock = systemClock,
): Promise<CreatedInvitation> {
  const valid = parseUserInput(invitationInput, { email, role });
  const token = randomBytes(32).toString('base64url');
  const { column, id } = targetColumn(target);
  return withTransaction(db, async (tx) => {
    await requireTarget(tx, target);
    const actorRole = await roleIn(tx, actorId, target);
    if (!actorRole) throw notFound('workspaceId' in target ? 'Workspace' : 'Publisher');
    if (!can(actorRole, 'manage_members')) throw forbidden('Only an owner can invite people.');
    const { rows: members } = await tx.query(
      `SELECT 1 FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.${column} = $1 AND lower(u.email) = lower($2)`,
      [id, valid.email],
    );
    if (members.length) throw alreadyMember();
    const now = clock.now();
    const { rows } = await tx.query<{ id: number; expiresAt: Date }>(
      `INSERT INTO invitations (token_hash, email, ${column}, role, invited_by, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, to_timestamp($6::double precision / 1000), to_timestamp($7::double precision / 1000))
       RETURNING id, expires_at AS "expiresAt"`,
      [hashToken(token), valid.email, id, valid.role, actorId, now, now + INVITATION_DAYS * DAY_MS],
    );
    return { id: rows[0]!.id, token, email: valid.email, role: valid.role, expiresAt: rows[0]!.expiresAt };
  });
}

export interface InvitationView {
  email: string;
  role: MemberRole;
  kind: 'workspace' | 'publisher';
  targetId: number;
  targetName: string;
  invitedBy: string;
  expiresAt: Date;
  state: 'pending' | 'accepted' | 'expired';
}

interface InvitationRow {
  id: number;
  email: string;
  role: MemberRole;
  workspace_id: number | null;
  publisher_id: number | null;
  expires_at: Date;
  accepted_at: Date | null;
}

const targetOf = (row: Pick<InvitationRow, 'workspace_id' | 'publisher_id'>): Target =>
  row.workspace_id !== null ? { workspaceId: row.workspace_id } : { publisherId: row.publisher_id! };

/** What an invite link is for (the accept page shows it before sign-up or sign-in); null when unknown. */
export async function describeInvitation(db: Db, token: string, clock: Clock = systemClock): Promise<InvitationView | null> {
  if (typeof token !== 'string' || token.length === 0 || token.length > 200) return null;
  const { rows } = await db.query<InvitationRow & { target_name: string; invited_by: string }>(
    `SELECT i.*, COALESCE(w.name, p.name) AS target_name, u.name AS invited_by
       FROM invitations i JOIN users u ON u.id = i.invited_by
       LEFT JOIN workspaces w ON w.id = i.workspace_id LEFT JOIN publishers p ON p.id = i.publisher_id
      WHERE i.token_hash = $1`,
    [hashToken(token)],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    email: row.email,
    role: row.role,
    kind: row.workspace_id !== null ? 'workspace' : 'publisher',
    targetId: row.workspace_id ?? row.publisher_id!,
    targetName: row.target_name,
    invitedBy: row.invited_by,
    expiresAt: row.expires_at,
    state: row.accepted_at ? 'accepted' : row.expires_at.getTime() <= clock.now() ? 'expired' : 'pending',
  };
}

export const invitationUsed = () => new DomainError('conflict', 'This invitation has already been used.', { reason: 'invitation_used' });
export const invitationExpired = () =>
  new DomainError('conflict', `This invitation has expired (links are valid for ${INVITATION_DAYS} days). Ask for a new one.`, {
    reason: 'invitation_expired',
  });

/**
 * The signed-in user joins with the invitation's role: only the invited email, before it
 * expires, once. The invitation row is locked, so two acceptances cannot both pass.
 */
export async function acceptInvitation(
  db: Db,
  token: string,
  userId: number,
  clock: Clock = systemClock,
): Promise<{ kind: 'workspace' | 'publisher'; id: number; role: MemberRole }> {
  if (typeof token !== 'string' || token.length === 0 || token.length > 200) throw notFound('Invitation');
  return withTransaction(db, async (tx) => {
    const { rows } = await tx.query<InvitationRow>('SELECT * FROM invitations WHERE token_hash = $1 FOR UPDATE', [hashToken(token)]);
    const inv = rows[0];
    if (!inv) throw notFound('Invitation');
    if (inv.accepted_at) throw invitationUsed();
    const now = clock.now();
    if (inv.expires_at.getTime() <= now) throw invitationExpired();
    const { rows: users } = await tx.query<{ email: string }>('SELECT email FROM users WHERE id = $1', [userId]);
    if (!users[0]) throw notFound('User');
    if (users[0].email.toLowerCase() !== inv.email.toLowerCase()) {
      throw forbidden(`This invitation is for another email address. Sign in as ${inv.email} to accept it.`);
    }
    const target = targetOf(inv);
    // Someone who already belongs keeps their role; the link is used up either way.
    const existing = await roleIn(tx, userId, target);
    if (!existing) await insertMembership(tx, target, userId, inv.role);
    await tx.query('UPDATE invitations SET accepted_at = to_timestamp($2::double precision / 1000), accepted_by = $3 WHERE id = $1', [
      inv.id,
      now,
      userId,
    ]);
    const { column, id } = targetColumn(target);
    return { kind: column === 'workspace_id' ? 'workspace' : 'publisher', id, role: existing ?? inv.role };
  });
}

export interface PendingInvitation {
  id: number;
  email: string;
  role: MemberRole;
  invitedBy: string;
  createdAt: Date;
  expiresAt: Date;
}

/** Invitations of the target not yet accepted nor expired (the Members page). */
export async function listPendingInvitations(db: Db, target: Target, clock: Clock = systemClock): Promise<PendingInvitation[]> {
  await requireTarget(db, target);
  const { column, id } = targetColumn(target);
  const { rows } = await db.query<PendingInvitation>(
    `SELECT i.id, i.email, i.role, u.name AS "invitedBy", i.created_at AS "createdAt", i.expires_at AS "expiresAt"
       FROM invitations i JOIN users u ON u.id = i.invited_by
      WHERE i.${column} = $1 AND i.accepted_at IS NULL AND i.expires_at > to_timestamp($2::double precision / 1000)
      ORDER BY i.created_at DESC, i.id DESC`,
    [id, clock.now()],
  );
  return rows;
}

/**
 * Sign-up through an invite link: a new user with the invited email (whatever SIGNUP says), who
 * joins at once. The link is checked before the user is made, so a used or expired link makes no
 * account.
 */
export async function signUpByInvitation(
  db: Db,
  token: string,
  input: { name: string; password: string },
  clock: Clock = systemClock,
): Promise<{ user: User; joined: Awaited<ReturnType<typeof acceptInvitation>> }> {
  const invitation = await describeInvitation(db, token, clock);
  if (!invitation) throw notFound('Invitation');
  if (invitation.state === 'accepted') throw invitationUsed();
  if (invitation.state === 'expired') throw invitationExpired();
  const user = await createUser(db, { email: invitation.email, name: input.name, password: input.password });
  return { user, joined: await acceptInvitation(db, token, user.id, clock) };
}
