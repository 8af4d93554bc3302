import { type Db, withTransaction } from '../../db/handle.js';
import type { Clock } from '../clock.js';
import { revokeKeysMadeBy } from '../keys/key-service.js';
import { endGrantsOf } from '../oauth/grants.js';
import { removeMember, type Target } from '../users/memberships.js';

/**
 * Someone removed from a workspace or publisher account, or leaving it (docs/people.md): the
 * membership goes, and with it, in the same transaction, every app they connected to that
 * workspace through OAuth. A grant's refresh token keeps rotating, so an app they allowed would
 * otherwise reach the workspace for ever; its tokens stop within 5 s, as after Revoke. The keys
 * they made are the workspace's and stay, unless the remover chose to revoke them too
 * (`revokeKeys`). The rules of removing (only an owner removes someone else, the last owner
 * stays) are `removeMember`'s.
 */
export async function endMembership(
  db: Db,
  target: Target,
  userId: number,
  opts: { actorId?: number; revokeKeys?: boolean },
  clock: Clock,
): Promise<{ removed: true; appsDisconnected: number; keysRevoked: number }> {
  return withTransaction(db, async (tx) => {
    await removeMember(tx, target, userId, opts.actorId === undefined ? {} : { actorId: opts.actorId });
    const appsDisconnected = 'workspaceId' in target ? await endGrantsOf(tx, target.workspaceId, userId, clock) : 0;
    const keysRevoked = opts.revokeKeys ? await revokeKeysMadeBy(tx, target, userId, clock) : 0;
    return { removed: true as const, appsDisconnected, keysRevoked };
  });
}
