import type { Db } from '../../db/handle.js';
import { notFound } from '../errors.js';

/** A member of the operator's staff acting in the operations console (docs/billing.md). */
export interface Staff {
  userId: number;
}

/**
 * Checks, in the caller's transaction, that the person is staff now: a `user set-staff … false`
 * a moment ago stops their next action, as a lowered role does in a workspace. Anyone else is
 * told the thing does not exist, as the operations console tells them.
 */
export async function requireStaff(tx: Db, staff: Staff, what: string): Promise<void> {
  const { rows } = await tx.query<{ is_staff: boolean }>({
    name: 'staff_check',
    text: 'SELECT is_staff FROM users WHERE id = $1',
    values: [staff.userId],
  });
  if (!rows[0]?.is_staff) throw notFound(what);
}
