import { type Db, withTransaction } from '../../db/handle.js';
import { type Clock, systemClock } from '../clock.js';
import type { MailSite } from '../mail/outbox.js';
import { mailAddressConfirmation } from '../users/address-links.js';
import { insertUser, prepareUser } from '../users/user-service.js';
import { insertMembership } from '../users/memberships.js';
import { assertCurrency, insertWorkspace } from '../workspaces/workspace-service.js';

/**
 * Open sign-up (SIGNUP=open): a new user and a new workspace they own, with a balance of zero
 * (it adds funds on its Funds page, docs/billing.md). The workspace is named after the person, and its
 * The seller API owner fields (email, names) are theirs. The user, the workspace, the membership
 * and the mail with the link that confirms the address are written in one transaction: a failure
 * leaves no user without a workspace, and no user whose link was never queued. The address is
 * unconfirmed until that link is used (docs/mail.md).
 */
export async function signUp(db: Db, input: { name: string; email: string; password: string }, site: MailSite, clock: Clock = systemClock) {
  const ready = await prepareUser(db, input);
  await assertCurrency(db, 'USD');
  return withTransaction(db, async (tx) => {
    const user = await insertUser(tx, ready, null);
    const [first, ...rest] = user.name.split(/\s+/);
    const workspace = await insertWorkspace(db, tx, {
      name: `${user.name}'s workspace`,
      ownerEmail: user.email,
      ownerFirstName: first ?? user.name,
      ownerLastName: rest.join(' ') || first || user.name,
    });
    await insertMembership(tx, { workspaceId: workspace.id }, user.id, 'owner');
    await mailAddressConfirmation(tx, user, site, clock);
    return { user, workspaceId: workspace.id };
  });
}
