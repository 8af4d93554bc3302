import { afterAll, describe, expect, it } from 'vitest';
import { acceptInvitation, createInvitation, describeInvitation, listPendingInvitations } from '../../../src/domain/users/invitations.js';
import { addMember, roleIn } from '../../../src/domain/users/memberships.js';
import { createUser } from '../../../src/domain/users/user-service.js';
import { createWorkspace } from '../../../src/domain/workspaces/workspace-service.js';
import { ManualClock } from '../../helpers/clock.js';
import { createTestDatabase } from '../../helpers/db.js';

const database = await createTestDatabase({ max: 20 });
afterAll(() => database.drop());
const db = database.pool;
const DAY = 86_400_000;

let n = 0;
async function setup() {
  const ws = { workspaceId: (await createWorkspace(db, { name: `Invite ws ${++n}` })).id };
  const owner = await createUser(db, { email: `owner${n}@example.com`, name: 'Owner', password: 'owner password' });
  await addMember(db, ws, owner.id, 'owner');
  const invitee = await createUser(db, { email: `Invitee${n}@Example.com`, name: 'Invitee', password: 'invitee password' });
  return { ws, owner, invitee };
}

describe('invitations', () => {
  it('refuses a user with another email, and leaves the invitation usable', async () => {
    const { ws, owner, invitee } = await setup();
    const other = await createUser(db, { email: `other${n}@example.com`, name: 'Other', password: 'other password' });
    const inv = await createInvitation(db, owner.id, ws, invitee.email, 'member');
    await expect(acceptInvitation(db, inv.token, other.id)).rejects.toMatchObject({ code: 'forbidden' });
    expect(await roleIn(db, other.id, ws)).toBeNull();
    expect(await acceptInvitation(db, inv.token, invitee.id)).toEqual({ kind: 'workspace', id: ws.workspaceId, role: 'member' });
  });

  it('expires after exactly 7 days (test clock)', async () => {
    const { ws, owner, invitee } = await setup();
    const clock = new ManualClock();
    const inv = await createInvitation(db, owner.id, ws, invitee.email.toLowerCase(), 'viewer', clock);
    expect(inv.expiresAt.getTime()).toBe(clock.now() + 7 * DAY);
    clock.advance(7 * DAY);
    await expect(acceptInvitation(db, inv.token, invitee.id, clock)).rejects.toMatchObject({ code: 'conflict', details: { reason: 'invitation_expired' } });
    expect((await describeInvitation(db, inv.token, clock))!.state).toBe('expired');
    expect(await listPendingInvitations(db, ws, clock)).toEqual([]);
    clock.advance(-1);
    expect((await describeInvitation(db, inv.token, clock))!.state).toBe('pending');
    expect(await acceptInvitation(db, inv.token, invitee.id, clock)).toMatchObject({ role: 'viewer' });
  });

  it('is single use, also when accepted twice at once', async () => {
    const { ws, owner, invitee } = await setup();
    const inv = await createInvitation(db, owner.id, ws, invitee.email, 'member');
    const results = await Promise.allSettled([acceptInvitation(db, inv.token, invitee.id), acceptInvitation(db, inv.token, invitee.id)]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject({ details: { reason: 'invitation_used' } });
    await expect(acceptInvitation(db, inv.token, invitee.id)).rejects.toMatchObject({ details: { reason: 'invitation_used' } });
    expect((await describeInvitation(db, inv.token))!.state).toBe('accepted');
  });

  it('an unknown or malformed token is not found', async () => {
    const { invitee } = await setup();
    await expect(acceptInvitation(db, 'no-such-token', invitee.id)).rejects.toMatchObject({ code: 'not_found' });
    await expect(acceptInvitation(db, '', invitee.id)).rejects.toMatchObject({ code: 'not_found' });
    await expect(acceptInvitation(db, 'x'.repeat(5000), invitee.id)).rejects.toMatchObject({ code: 'not_found' });
    expect(await describeInvitation(db, 'no-such-token')).toBeNull();
  });

  it('only an owner of the target invites; an outsider gets not found; a member cannot be invited again', async () => {
    const { ws, owner, invitee } = await setup();
    const member = await createUser(db, { email: `member${n}@example.com`, name: 'Member', password: 'member password' });
    await addMember(db, ws, member.id, 'member');
    await expect(createInvitation(db, member.id, ws, 'x@example.com', 'viewer')).rejects.toMatchObject({ code: 'forbidden' });
    await expect(createInvitation(db, invitee.id, ws, 'x@example.com', 'viewer')).rejects.toMatchObject({ code: 'not_found' });
    await expect(createInvitation(db, owner.id, ws, member.email.toUpperCase(), 'owner')).rejects.toMatchObject({
      code: 'conflict',
      details: { reason: 'already_member' },
    });
    await expect(createInvitation(db, owner.id, ws, 'not an email', 'boss' as never)).rejects.toMatchObject({
      code: 'invalid_input',
      details: { errors: { email: expect.any(Array), role: expect.any(Array) } },
    });
  });

  it('stores only a hash of the token; describes and lists the pending invitation', async () => {
    const { ws, owner } = await setup();
    const inv = await createInvitation(db, owner.id, ws, 'new.person@example.com', 'owner');
    expect(inv.token.length).toBeGreaterThanOrEqual(40);
    const { rows } = await database.pool.query('SELECT token_hash FROM invitations WHERE id = $1', [inv.id]);
    expect(rows[0].token_hash).not.toContain(inv.token);
    expect(await describeInvitation(db, inv.token)).toMatchObject({
      email: 'new.person@example.com',
      role: 'owner',
      kind: 'workspace',
      targetId: ws.workspaceId,
      invitedBy: 'Owner',
      state: 'pending',
    });
    expect((await listPendingInvitations(db, ws)).map((i) => i.email)).toEqual(['new.person@example.com']);
  });

  it('someone who already belongs keeps their role; the link is used up', async () => {
    const { ws, owner, invitee } = await setup();
    const inv = await createInvitation(db, owner.id, ws, invitee.email, 'viewer');
    await addMember(db, ws, invitee.id, 'member');
    expect(await acceptInvitation(db, inv.token, invitee.id)).toMatchObject({ role: 'member' });
    expect(await roleIn(db, invitee.id, ws)).toBe('member');
  });
});
