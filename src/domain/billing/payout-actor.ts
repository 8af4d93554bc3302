import type { Db } from '../../db/handle.js';
import { forbidden, notFound } from '../errors.js';
import { roleIn } from '../users/memberships.js';
import { can } from '../users/permissions.js';

/** A person of a publisher account acting on its payouts (the console). */
export interface PayoutActor {
  publisherId: number;
  userId: number;
}

export const NOT_A_PAYOUT_OWNER = "Only the publisher's owners can request payouts or change where the publisher is paid.";

/**
 * Checks in the caller's transaction that the person is an owner of the publisher now
 * (`manage_billing`): a member or viewer is refused (403); someone no longer a member is told the
 * publisher does not exist, as another tenant's.
 */
export async function requirePayoutOwner(tx: Db, actor: PayoutActor): Promise<void> {
  const role = await roleIn(tx, actor.userId, { publisherId: actor.publisherId });
  if (!role) throw notFound('Publisher');
  if (!can(role, 'manage_billing')) throw forbidden(NOT_A_PAYOUT_OWNER);
}
