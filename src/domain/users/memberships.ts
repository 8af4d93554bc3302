import { z } from 'zod';
import type { MemberRole } from '../../common/enums.js';
import { constraintOf, pgErrorCode } from '../../db/errors.js';
import { type Db, withTransaction } from '../../db/handle.js';
import { DomainError, forbidden, notFound } from '../errors.js';
import { can } from './permissions.js';
import { parseUserInput, roleField } from './user-input.js';

// A role parsed as a named field, so a refusal names `role` rather than the whole input.
const roleInput = z.object({ role: roleField });

/** A workspace or a publisher account: what a membership, an invitation or a key belongs to. */
export type Target = { workspaceId: number } | { publisherId: number };

export interface Member {
  userId: number;
  email: string;
  name: string;
  role: MemberRole;
  since: Date;
}

export interface MembershipOf {
  kind: 'workspace' | 'publisher';
  id: number;
  name: string;
  role: MemberRole;
}

/** The column and value a target is found by; the column is one of two fixed names, never input. */
export function targetColumn(target: Target): { column: 'workspace_id' | 'publisher_id'; id: number } {
  return 'workspaceId' in target ? { column: 'workspace_id', id: target.workspaceId } : { column: 'publisher_id', id: target.publisherId };
}

const targetWord = (target: Target) => ('workspaceId' in target ? 'Workspace' : 'Publisher');

export async function requireTarget(q: Db, target: Target): Promise<{ name: string }> {
  const table = 'workspaceId' in target ? 'workspaces' : 'publishers';
  const { rows } = await q.query<{ name: string }>(`SELECT name FROM ${table} WHERE id = $1`, [targetColumn(target).id]);
  if (!rows[0]) throw notFound(targetWord(target));
  return rows[0];
}

export const lastOwner = (target: Target) =>
  new DomainError('conflict', `A ${targetWord(target).toLowerCase()} always keeps at least one owner: make someone else owner first.`, {
    reason: 'last_owner',
  });

export const alreadyMember = () =>
  new DomainError('conflict', 'This person is already a member.', { reason: 'already_member', errors: { email: ['is already a member'] } });

/** The user's role in the target, or null when they are not a member. */
export async function roleIn(q: Db, userId: number, target: Target): Promise<MemberRole | null> {
  const { column, id } = targetColumn(target);
  const { rows } = await q.query<{ role: MemberRole }>(`SELECT role FROM memberships WHERE user_id = $1 AND ${column} = $2`, [userId, id]);
  return rows[0]?.role ?? null;
}

/**
 * When an actor acts, they must be a member (else the target is "not found", as another
 * tenant's is) with the permission to manage members (else forbidden).
 */
async function checkActor(q: Db, actorId: number | undefined, target: Target, allowSelf?: number): Promise<void> {
  if (actorId === undefined) return; // the operator, from the admin CLI
  const role = await roleIn(q, actorId, target);
  if (!role) throw notFound(targetWord(target));
  if (actorId !== allowSelf && !can(role, 'manage_members')) throw forbidden('Only an owner can manage members.');
}

/** Adds a user to a target with a role (the admin CLI; invitations use the same insert). */
export async function addMember(db: Db, target: Target, userId: number, role: MemberRole, opts: { actorId?: number } = {}): Promise<Member> {
  const { role: valid } = parseUserInput(roleInput, { role });
  return withTransaction(db, async (tx) => {
    await requireTarget(tx, target);
    await checkActor(tx, opts.actorId, target);
    await insertMembership(tx, target, userId, valid);
    return (await listMembersOn(tx, target)).find((m) => m.userId === userId)!;
  });
}

export async function insertMembership(tx: Db, target: Target, userId: number, role: MemberRole): Promise<void> {
  const { column, id } = targetColumn(target);
  try {
    await tx.query(`INSERT INTO memberships (user_id, ${column}, role) VALUES ($1, $2, $3)`, [userId, id, role]);
  } catch (err) {
    const code = pgErrorCode(err);
    if (code === '23505') throw alreadyMember();
    if (code === '23503' && constraintOf(err) === 'memberships_user_id_users_id_fk') throw notFound('User');
    throw err;
  }
}

/**
 * Locks the target's owner rows and the user's own membership, so two changes that each leave
 * one owner cannot both pass: the second waits, then sees the first's change.
 */
async function lockForChange(tx: Db, target: Target, userId: number): Promise<{ role: MemberRole; owners: number }> {
  const { column, id } = targetColumn(target);
  const { rows } = await tx.query<{ user_id: number; role: MemberRole }>(
    `SELECT user_id, role FROM memberships WHERE ${column} = $1 AND (role = 'owner' OR user_id = $2) ORDER BY id FOR UPDATE`,
    [id, userId],
  );
  const own = rows.find((r) => r.user_id === userId);
  if (!own) throw notFound('Member');
  return { role: own.role, owners: rows.filter((r) => r.role === 'owner').length };
}

export async function changeRole(db: Db, target: Target, userId: number, role: MemberRole, opts: { actorId?: number } = {}): Promise<Member> {
  const { role: valid } = parseUserInput(roleInput, { role });
  return withTransaction(db, async (tx) => {
    await requireTarget(tx, target);
    await checkActor(tx, opts.actorId, target);
    const current = await lockForChange(tx, target, userId);
    if (current.role === 'owner' && valid !== 'owner' && current.owners <= 1) throw lastOwner(target);
    const { column, id } = targetColumn(target);
    await tx.query(`UPDATE memberships SET role = $3 WHERE user_id = $1 AND ${column} = $2`, [userId, id, valid]);
    return (await listMembersOn(tx, target)).find((m) => m.userId === userId)!;
  });
}

/**
 * Removes a member; anyone may leave, only an owner may remove someone else. What goes with the
 * membership (the apps they connected, the keys they made if chosen) is `endMembership`'s
 * (src/domain/accounts/membership-end.ts), which calls this in its transaction: the console calls that.
 */
export async function removeMember(db: Db, target: Target, userId: number, opts: { actorId?: number } = {}): Promise<{ removed: true }> {
  return withTransaction(db, async (tx) => {
    await requireTarget(tx, target);
    await checkActor(tx, opts.actorId, target, userId);
    const current = await lockForChange(tx, target, userId);
    if (current.role === 'owner' && current.owners <= 1) throw lastOwner(target);
    const { column, id } = targetColumn(target);
    await tx.query(`DELETE FROM memberships WHERE user_id = $1 AND ${column} = $2`, [userId, id]);
    return { removed: true as const };
  });
}

async function listMembersOn(q: Db, target: Target): Promise<Member[]> {
  const { column, id } = targetColumn(target);
  const { rows } = await q.query<Member>(
    `SELECT u.id AS "userId", u.email, u.name, m.role, m.created_at AS since
       FROM memberships m JOIN users u ON u.id = m.user_id
      WHERE m.${column} = $1
      ORDER BY array_position(ARRAY['owner','member','viewer']::member_role[], m.role), lower(u.name), u.id`,
    [id],
  );
  return rows;
}

/** The target's members, owners first, then by name. */
export async function listMembers(db: Db, target: Target): Promise<Member[]> {
  await requireTarget(db, target);
  return listMembersOn(db, target);
}

/** Every workspace and publisher account the user belongs to (the console's switcher). */
export async function membershipsOf(db: Db, userId: number): Promise<MembershipOf[]> {
  const { rows } = await db.query<MembershipOf>(
    `SELECT 'workspace' AS kind, w.id, w.name, m.role FROM memberships m JOIN workspaces w ON w.id = m.workspace_id WHERE m.user_id = $1
     UNION ALL
     SELECT 'publisher' AS kind, p.id, p.name, m.role FROM memberships m JOIN publishers p ON p.id = m.publisher_id WHERE m.user_id = $1
     ORDER BY kind DESC, name, id`,
    [userId],
  );
  return rows;
}
