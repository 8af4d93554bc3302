import type { Db } from '../../db/client.js';
import { createUser } from '../users/user-service.js';
import { addMember } from '../users/memberships.js';
import { createWorkspace } from '../workspaces/workspace-service.js';

/**
 * Open sign-up (SIGNUP=open): a new user and a new workspace they own, with a balance of zero
 * (top-ups stay an operator's action). The workspace is named after the person, and its
 * Interface B owner fields (email, names) are theirs.
 */
export async function signUp(db: Db, input: { name: string; email: string; password: string }) {
  const user = await createUser(db, input);
  const [first, ...rest] = user.name.split(/\s+/);
  const workspace = await createWorkspace(db, {
    name: `${user.name}'s workspace`,
    ownerEmail: user.email,
    ownerFirstName: first ?? user.name,
    ownerLastName: rest.join(' ') || first || user.name,
  });
  await addMember(db, { workspaceId: workspace.id }, user.id, 'owner');
  return { user, workspaceId: workspace.id };
}
