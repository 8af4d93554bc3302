import { afterAll, describe, expect, it } from 'vitest';
import { createPublisher } from '../../../src/domain/publishers/publisher-service.js';
import { addMember, changeRole, listMembers, membershipsOf, removeMember, roleIn } from '../../../src/domain/users/memberships.js';
import { can, rolePermissions } from '../../../src/domain/users/permissions.js';
import { createUser } from '../../../src/domain/users/user-service.js';
import { createWorkspace } from '../../../src/domain/workspaces/workspace-service.js';
import { createTestDatabase } from '../../helpers/db.js';

const database = await createTestDatabase({ max: 20 });
afterAll(() => database.drop());
const db = database.pool;

let n = 0;
// Each call its own number: two calls in the same millisecond (hashing at the tests' cost takes
// far less) must not make the same address.
const user = (name?: string) => {
  const i = ++n;
  return createUser(db, { email: `m${i}@example.com`, name: name ?? `User ${i}`, password: 'member password' });
};
const workspace = async () => ({ workspaceId: (await createWorkspace(db, { name: `Members ws ${++n}` })).id });

describe('memberships', () => {
  it('refuses to demote or remove the last owner, and names why', async () => {
    const ws = await workspace();
    const owner = await user();
    await addMember(db, ws, owner.id, 'owner');
    await expect(changeRole(db, ws, owner.id, 'member')).rejects.toMatchObject({ code: 'conflict', details: { reason: 'last_owner' } });
    await expect(removeMember(db, ws, owner.id)).rejects.toMatchObject({ code: 'conflict', details: { reason: 'last_owner' } });
    await expect(removeMember(db, ws, owner.id, { actorId: owner.id })).rejects.toMatchObject({ details: { reason: 'last_owner' } });
    expect(await roleIn(db, owner.id, ws)).toBe('owner');
  });

  it('two owners demoting each other at once: exactly one succeeds, one owner remains', async () => {
    for (let round = 0; round < 5; round++) {
      const ws = await workspace();
      const [a, b] = [await user(), await user()];
      await addMember(db, ws, a.id, 'owner');
      await addMember(db, ws, b.id, 'owner');
      const results = await Promise.allSettled([
        changeRole(db, ws, b.id, 'viewer', { actorId: a.id }),
        removeMember(db, ws, a.id, { actorId: b.id }),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const owners = (await listMembers(db, ws)).filter((m) => m.role === 'owner');
      expect(owners).toHaveLength(1);
    }
  });

  it('a member or viewer cannot change roles or remove others; a non-member gets not found', async () => {
    const ws = await workspace();
    const [owner, member, viewer, outsider] = [await user(), await user(), await user(), await user()];
    await addMember(db, ws, owner.id, 'owner');
    await addMember(db, ws, member.id, 'member');
    await addMember(db, ws, viewer.id, 'viewer');
    await expect(changeRole(db, ws, viewer.id, 'owner', { actorId: member.id })).rejects.toMatchObject({ code: 'forbidden' });
    await expect(changeRole(db, ws, member.id, 'owner', { actorId: member.id })).rejects.toMatchObject({ code: 'forbidden' });
    await expect(removeMember(db, ws, owner.id, { actorId: viewer.id })).rejects.toMatchObject({ code: 'forbidden' });
    await expect(removeMember(db, ws, member.id, { actorId: outsider.id })).rejects.toMatchObject({ code: 'not_found' });
    await expect(addMember(db, ws, outsider.id, 'owner', { actorId: member.id })).rejects.toMatchObject({ code: 'forbidden' });
    // Anyone may leave.
    expect(await removeMember(db, ws, viewer.id, { actorId: viewer.id })).toEqual({ removed: true });
    expect(await roleIn(db, viewer.id, ws)).toBeNull();
  });

  it('refuses a second membership, an unknown role, user or target', async () => {
    const ws = await workspace();
    const u = await user();
    await addMember(db, ws, u.id, 'member');
    await expect(addMember(db, ws, u.id, 'owner')).rejects.toMatchObject({ code: 'conflict', details: { reason: 'already_member' } });
    await expect(addMember(db, ws, u.id, 'admin' as never)).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(addMember(db, ws, 999_999, 'member')).rejects.toMatchObject({ code: 'not_found' });
    await expect(addMember(db, { workspaceId: 999_999 }, u.id, 'member')).rejects.toMatchObject({ code: 'not_found' });
    await expect(addMember(db, { publisherId: 999_999 }, u.id, 'member')).rejects.toMatchObject({ code: 'not_found' });
    await expect(changeRole(db, ws, 999_999, 'member')).rejects.toMatchObject({ code: 'not_found' });
  });

  it('promote, demote and remove once another owner exists; lists and memberships follow', async () => {
    const ws = await workspace();
    const pub = { publisherId: (await createPublisher(db, `Pub ${++n}`)).id };
    const [owner, other] = [await user('Zed Owner'), await user('Amy Other')];
    await addMember(db, ws, owner.id, 'owner');
    await addMember(db, ws, other.id, 'viewer');
    await addMember(db, pub, other.id, 'owner');
    expect((await listMembers(db, ws)).map((m) => [m.name, m.role])).toEqual([
      ['Zed Owner', 'owner'],
      ['Amy Other', 'viewer'],
    ]);
    await changeRole(db, ws, other.id, 'owner', { actorId: owner.id });
    await changeRole(db, ws, owner.id, 'member', { actorId: owner.id });
    expect(await roleIn(db, owner.id, ws)).toBe('member');
    await removeMember(db, ws, owner.id, { actorId: other.id });
    expect(await roleIn(db, owner.id, ws)).toBeNull();
    // Roles are per target: the publisher membership is untouched.
    expect((await membershipsOf(db, other.id)).map((m) => [m.kind, m.id, m.role])).toEqual([
      ['workspace', ws.workspaceId, 'owner'],
      ['publisher', pub.publisherId, 'owner'],
    ]);
    expect(await roleIn(db, other.id, { workspaceId: pub.publisherId + 1000 })).toBeNull();
  });

  it('the role table: owners do everything, members orders and read-only keys, viewers read', () => {
    expect(can('owner', 'manage_spending_keys')).toBe(true);
    expect(can('member', 'manage_spending_keys')).toBe(false);
    expect(can('member', 'manage_read_only_keys')).toBe(true);
    expect(can('member', 'manage_orders')).toBe(true);
    expect(can('member', 'manage_members')).toBe(false);
    expect(can('viewer', 'manage_orders')).toBe(false);
    expect(can(null, 'read')).toBe(false);
    expect(rolePermissions.viewer).toEqual(['read']);
  });
});
