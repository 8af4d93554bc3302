import type { MemberRole } from '../../common/enums.js';

/**
 * What each role may do in a workspace or publisher account: the one table the console asks
 * before every page and action (docs/people.md). Reads cover every page of the target, keys
 * listed by prefix included.
 */
export type Permission =
  | 'read'
  | 'manage_orders' // submit content, approve drafts, cancel, message (a publisher's: accept, draft, publish…)
  | 'spend' // pay with the workspace's money: place an order, approve a placement (as a spending key does)
  | 'manage_read_only_keys' // create, revoke, roll keys that cannot spend (publisher keys too)
  | 'manage_spending_keys' // create, revoke, roll keys with "Can place orders"
  | 'manage_rules' // approval rules
  | 'manage_webhooks'
  | 'manage_members' // invite, change roles, remove
  | 'manage_billing'; // add funds: top-up requests and their cancelling (docs/billing.md)

export const rolePermissions: Readonly<Record<MemberRole, readonly Permission[]>> = {
  owner: ['read', 'manage_orders', 'spend', 'manage_read_only_keys', 'manage_spending_keys', 'manage_rules', 'manage_webhooks', 'manage_members', 'manage_billing'],
  member: ['read', 'manage_orders', 'manage_read_only_keys'],
  viewer: ['read'],
};

export function can(role: MemberRole | null | undefined, permission: Permission): boolean {
  return role ? rolePermissions[role].includes(permission) : false;
}
