import type { MemberRole } from '../../common/enums.js';
import { type Db, withTransaction } from '../../db/handle.js';
import { systemClock, type Clock } from '../clock.js';
import { DomainError, forbidden, notFound } from '../errors.js';
import { alreadyMember, insertMembership, requireTarget, roleIn, targetColumn, type Target } from './memberships.js';
import { can } from './permissions.js';
import { createUser, findUserByEmail, type User } from './user-service.js';
import { hashPassword } from './passwords.js';
import { enqueueMail, type MailSite } from '../mail/outbox.js';
import { consoleLink, INVITATION_PROOF_MINUTES, invitationMail, invitationProofMail } from './user-mails.js';
import { emailField, nameField, parseUserInput, passwordField, roleField } from './user-input.js';
import { hashToken, newToken } from './tokens.js';
import { z } from 'zod';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { ensureAppSecret } from '../../db/app-secrets.js';

export const INVITATION_DAYS = 7;
const DAY_MS = 86_400_000;

const invitationInput = z.object({ email: emailField, role: roleField });

export interface CreatedInvitation {
  id: number;
  /** The raw token, for the invite link: returned here only, never stored. */
  token: string;
  email: string;
  role: MemberRole;
  expiresAt: Date;
  /** Whether the link was also queued as a mail to the address (`mailVia` given, the inviter's own address confirmed). */
  mailed: boolean;
}

/**
 * An owner invites an email with a role. The link's token is returned once; only its hash is kept.
 * With `mailVia`, the link is also mailed to the address, in the same transaction, when the
 * inviter's own address is confirmed: an unconfirmed account must not make the service mail
 * strangers words it chose (the workspace's name, its own). The link to copy works either way.
 */
export async function createInvitation(
  db: Db,
  actorId: number,
  target: Target,
  email: string,
  role: MemberRole,
  clock: Clock = systemClock,
  opts: { mailVia?: MailSite } = {},
): Promise<CreatedInvitation> {
  const valid = parseUserInput(invitationInput, { email, role });
  const token = newToken();
  const { column, id } = targetColumn(target);
  return withTransaction(db, async (tx) => {
    const { name: targetName } = await requireTarget(tx, target);
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
    const invitation = { id: rows[0]!.id, token, email: valid.email, role: valid.role, expiresAt: rows[0]!.expiresAt };
    let mailed = false;
    if (opts.mailVia) {
      const { rows: inviters } = await tx.query<{ name: string; verified: boolean }>(
        'SELECT name, email_verified_at IS NOT NULL AS verified FROM users WHERE id = $1',
        [actorId],
      );
      const inviter = inviters[0];
      if (inviter?.verified) {
        const invitee = await findUserByEmail(tx, valid.email);
        const mail = invitationMail({
          email: valid.email,
          inviter: inviter.name,
          kindLabel: column === 'workspace_id' ? 'workspace' : 'publisher account',
          targetName,
          role: valid.role,
          expiresOn: invitation.expiresAt.toISOString().slice(0, 10),
          link: consoleLink(opts.mailVia, 'invitation', token),
        });
        mailed = await enqueueMail(tx, opts.mailVia, { kind: 'invitation', subjectId: invitation.id, userId: invitee?.id ?? null, to: valid.email, ...mail }, now);
      }
    }
    return { ...invitation, mailed };
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

// The columns of InvitationRow, named (not `*`): the token's hash stays in the database, and a
// joined `invited_by` (the inviter's name) does not meet the column of that name (their id).
const INVITATION_COLUMNS = 'i.id, i.email, i.role, i.workspace_id, i.publisher_id, i.expires_at, i.accepted_at';

const targetOf = (row: Pick<InvitationRow, 'workspace_id' | 'publisher_id'>): Target =>
  row.workspace_id !== null ? { workspaceId: row.workspace_id } : { publisherId: row.publisher_id! };

/** What an invite link is for (the accept page shows it before sign-up or sign-in); null when unknown. */
export async function describeInvitation(db: Db, token: string, clock: Clock = systemClock): Promise<InvitationView | null> {
  if (typeof token !== 'string' || token.length === 0 || token.length > 200) return null;
  const { rows } = await db.query<InvitationRow & { target_name: string; invited_by: string }>(
    `SELECT ${INVITATION_COLUMNS}, COALESCE(w.name, p.name) AS target_name, u.name AS invited_by
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

export const unconfirmedInvitee = () =>
  new DomainError('forbidden', 'This account has not confirmed its address, so it cannot join as it is: set a new password through the invitation link, which confirms it.', {
    reason: 'address_unconfirmed',
  });

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
    const { rows } = await tx.query<InvitationRow>(`SELECT ${INVITATION_COLUMNS} FROM invitations i WHERE i.token_hash = $1 FOR UPDATE`, [hashToken(token)]);
    const inv = rows[0];
    if (!inv) throw notFound('Invitation');
    if (inv.accepted_at) throw invitationUsed();
    const now = clock.now();
    if (inv.expires_at.getTime() <= now) throw invitationExpired();
    const { rows: users } = await tx.query<{ email: string; verified: boolean }>(
      'SELECT email, email_verified_at IS NOT NULL AS verified FROM users WHERE id = $1',
      [userId],
    );
    if (!users[0]) throw notFound('User');
    if (users[0].email.toLowerCase() !== inv.email.toLowerCase()) {
      throw forbidden(`This invitation is for another email address. Sign in as ${inv.email} to accept it.`);
    }
    // An unconfirmed account may be a squatter's, who signed up with the address first: it joins
    // only through claimByInvitation, which sets a new password and ends every session.
    if (!users[0].verified) throw unconfirmedInvitee();
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

/**
 * The invitation link opened for an address whose account never confirmed it: whoever made that
 * account may not own the address (someone can sign up with another's address first and wait).
 * The link proves the address, so its holder takes the account: a new name and password, the
 * address confirmed, every session of the account ended (the squatter's), every other link it was
 * mailed dead, and the invitation accepted, all in one transaction.
 */
export async function claimByInvitation(
  db: Db,
  token: string,
  input: { name: string; password: string },
  clock: Clock = systemClock,
): Promise<{ user: User; joined: Awaited<ReturnType<typeof acceptInvitation>>; sessionsEnded: number }> {
  const invitation = await describeInvitation(db, token, clock);
  if (!invitation) throw notFound('Invitation');
  if (invitation.state === 'accepted') throw invitationUsed();
  if (invitation.state === 'expired') throw invitationExpired();
  const valid = parseUserInput(z.object({ name: nameField, password: passwordField }), input);
  const passwordHash = await hashPassword(valid.password);
  return withTransaction(db, async (tx) => {
    const now = new Date(clock.now());
    const { rows } = await tx.query<{ id: number }>(
      `UPDATE users SET name = $2, password_hash = $3, email_verified_at = $4
        WHERE lower(email) = lower($1) AND email_verified_at IS NULL RETURNING id`,
      [invitation.email, valid.name, passwordHash, now],
    );
    if (!rows[0]) {
      throw new DomainError('conflict', `The account of ${invitation.email} has confirmed its address: sign in with its password to join.`, {
        reason: 'address_confirmed',
      });
    }
    const userId = rows[0].id;
    await tx.query('UPDATE user_tokens SET used_at = $2 WHERE user_id = $1 AND used_at IS NULL', [userId, now]);
    const ended = await tx.query('DELETE FROM sessions WHERE user_id = $1', [userId]);
    const joined = await acceptInvitation(tx, token, userId, clock);
    const user = (await findUserByEmail(tx, invitation.email))!;
    return { user, joined, sessionsEnded: ended.rowCount ?? 0 };
  });
}

// Signed out, an invite link proves nothing about the address: its owner saw it too (Members shows
// it to copy). So whoever sends the invitation's form for an address with no confirmed account
// is mailed a second link, to that address, carrying a proof: `<end, in seconds>.<HMAC of the
// invitation, its address and that end>`. Nothing is stored per proof; it dies with its end
// (INVITATION_PROOF_MINUTES) or when the invitation is used. The key is in app_secrets.

const PROOF = /^([1-9]\d{0,10})\.([A-Za-z0-9_-]{43})$/;
const proofKey = (db: Db) => ensureAppSecret(db, 'invitation_proof_key', () => randomBytes(32).toString('base64url'));
const signProof = (key: string, invitationId: number, email: string, end: number) =>
  createHmac('sha256', key).update(`invitation-proof:${invitationId}:${email.toLowerCase()}:${end}`).digest('base64url');

async function pendingRow(db: Db, token: string, clock: Clock): Promise<InvitationRow> {
  if (typeof token !== 'string' || token.length === 0 || token.length > 200) throw notFound('Invitation');
  const { rows } = await db.query<InvitationRow>(`SELECT ${INVITATION_COLUMNS} FROM invitations i WHERE i.token_hash = $1`, [hashToken(token)]);
  const inv = rows[0];
  if (!inv) throw notFound('Invitation');
  if (inv.accepted_at) throw invitationUsed();
  if (inv.expires_at.getTime() <= clock.now()) throw invitationExpired();
  return inv;
}

/**
 * Mails the invited address the link that finishes joining (`/app/invitation?token=…&mail_token=…`).
 * The mail's words are fixed: whoever asks for it may be anyone holding the invite link.
 */
export async function mailInvitationProof(db: Db, token: string, site: MailSite, clock: Clock = systemClock): Promise<void> {
  const inv = await pendingRow(db, token, clock);
  const now = clock.now();
  const end = Math.ceil(now / 1000) + INVITATION_PROOF_MINUTES * 60;
  const proof = `${end}.${signProof(await proofKey(db), inv.id, inv.email, end)}`;
  const link = `${consoleLink(site, 'invitation', token)}&mail_token=${encodeURIComponent(proof)}`;
  const invitee = await findUserByEmail(db, inv.email);
  await enqueueMail(db, site, { kind: 'invitation_proof', subjectId: end, userId: invitee?.id ?? null, to: inv.email, ...invitationProofMail(inv.email, link) }, now);
}

export const proofExpired = () =>
  new DomainError('conflict', `The link mailed to you has expired (it works for ${INVITATION_PROOF_MINUTES} minutes). Send the form below again for a new one.`, {
    reason: 'link_expired',
  });

/** Whether `proof` is a mailed proof of the pending invitation `token`: 'valid', 'expired' or 'none'. */
export async function checkInvitationProof(db: Db, token: string, proof: unknown, clock: Clock = systemClock): Promise<'valid' | 'expired' | 'none'> {
  const m = typeof proof === 'string' ? PROOF.exec(proof) : null;
  if (!m) return 'none';
  const inv = await pendingRow(db, token, clock);
  const end = Number(m[1]);
  const expected = Buffer.from(signProof(await proofKey(db), inv.id, inv.email, end));
  const given = Buffer.from(m[2]!);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'none';
  return end * 1000 <= clock.now() ? 'expired' : 'valid';
}

/**
 * Joining through the mailed link: with no account, one is made (signUpByInvitation); an account
 * that never confirmed its address is claimed (claimByInvitation: every session of it ends); a
 * confirmed one is not touched (its password signs in on the invitation's form).
 */
export async function joinByMailedLink(
  db: Db,
  token: string,
  proof: unknown,
  input: { name: string; password: string },
  clock: Clock = systemClock,
): Promise<{ user: User; joined: Awaited<ReturnType<typeof acceptInvitation>> }> {
  const state = await checkInvitationProof(db, token, proof, clock);
  if (state === 'expired') throw proofExpired();
  if (state !== 'valid') throw forbidden('This link does not prove the address: use the link mailed to it.');
  const inv = await pendingRow(db, token, clock);
  const existing = await findUserByEmail(db, inv.email);
  return existing ? claimByInvitation(db, token, input, clock) : signUpByInvitation(db, token, input, clock);
}
